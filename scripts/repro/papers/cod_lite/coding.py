"""Range coding of the quantised latent with constriction (exact bitstreams, not ideal code lengths).

Each symbol is coded with its channel's categorical distribution from the learned entropy model; the
bitstream is constriction's list of 32-bit words, so the rate counts every bit written. The image size
(two 16-bit integers) is the declared header, counted separately.
"""

from __future__ import annotations

import constriction
import numpy as np

HEADER_BITS = 32


def _flat(q: np.ndarray, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Symbols (0 .. 2 levels) and their channel index, in (channel, y, x) order of one latent (C, h, w)."""
    channels = np.broadcast_to(np.arange(q.shape[0])[:, None, None], q.shape).reshape(-1)
    return (q.reshape(-1) + levels).astype(np.int32), channels


def encode(q: np.ndarray, pmf: np.ndarray) -> np.ndarray:
    """Bitstream (uint32 words) of one integer latent (C, h, w) under the per-channel pmf (C, K)."""
    levels = (pmf.shape[1] - 1) // 2
    symbols, channels = _flat(q, levels)
    if symbols.min() < 0 or symbols.max() >= pmf.shape[1]:
        raise ValueError("latent value outside the entropy model's alphabet")
    coder = constriction.stream.queue.RangeEncoder()
    family = constriction.stream.model.Categorical(perfect=False)
    coder.encode(symbols, family, np.ascontiguousarray(pmf[channels], dtype=np.float64))
    return coder.get_compressed()


def decode(words: np.ndarray, pmf: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """Integer latent (C, h, w) read back from its bitstream."""
    levels = (pmf.shape[1] - 1) // 2
    channels = np.broadcast_to(np.arange(shape[0])[:, None, None], shape).reshape(-1)
    coder = constriction.stream.queue.RangeDecoder(words)
    family = constriction.stream.model.Categorical(perfect=False)
    symbols = coder.decode(family, np.ascontiguousarray(pmf[channels], dtype=np.float64))
    return (np.asarray(symbols, dtype=np.int64) - levels).reshape(shape)


def ideal_bits(q: np.ndarray, pmf: np.ndarray) -> float:
    """Information content -sum log2 p(symbol) of one latent: the bound the range coder approaches."""
    levels = (pmf.shape[1] - 1) // 2
    symbols, channels = _flat(q, levels)
    return float(-np.sum(np.log2(pmf[channels, symbols])))
