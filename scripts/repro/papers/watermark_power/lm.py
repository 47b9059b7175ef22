"""Word-level text, vocabulary, an interpolated Kneser-Ney bigram LM and the keyed green lists.

The LM's next-token distribution is exact (a dense V x V table), so power and distortion predictions
use the true p_t. Green lists: a keyed splitmix64 hash of (key, previous token, candidate) ranks the
vocabulary for each previous token; the gamma V lowest ranks are green (exact list size, as in KGW).
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|[.,;:!?]")
UNK = "<unk>"


def tokenize(text: str) -> list[str]:
    return WORD.findall(text.lower())


def vocabulary(tokens: list[str], size: int) -> list[str]:
    return [UNK] + [w for w, _ in Counter(tokens).most_common(size - 1)]


def encode(tokens: list[str], vocab: list[str]) -> np.ndarray:
    index = {w: i for i, w in enumerate(vocab)}
    return np.array([index.get(w, 0) for w in tokens], dtype=np.int64)


def kneser_ney_bigram(ids: np.ndarray, v: int, discount: float = 0.75) -> np.ndarray:
    """P[prev, next]: interpolated Kneser-Ney bigram (continuation unigram as the lower order)."""
    counts = np.zeros((v, v))
    np.add.at(counts, (ids[:-1], ids[1:]), 1.0)
    continuation = (counts > 0).sum(axis=0) + 1e-3
    continuation = continuation / continuation.sum()
    totals = counts.sum(axis=1, keepdims=True)
    types = (counts > 0).sum(axis=1, keepdims=True)
    safe = np.maximum(totals, 1)
    lam = np.where(totals > 0, discount * types / safe, 1.0)
    p = np.maximum(counts - discount, 0) / safe + lam * continuation[None, :]
    return p / p.sum(axis=1, keepdims=True)


def splitmix64(x: np.ndarray) -> np.ndarray:
    x = (x + np.uint64(0x9E3779B97F4A7C15)).astype(np.uint64)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def keyed_hash(key: int, prev: np.ndarray, v: int) -> np.ndarray:
    """H[i, w]: the keyed hash of (key, prev[i], candidate w) that orders the vocabulary after prev[i]."""
    with np.errstate(over="ignore"):
        p = np.asarray(prev).astype(np.uint64)[:, None]
        cand = np.arange(v, dtype=np.uint64)[None, :]
        return splitmix64(splitmix64(np.uint64(key) ^ p * np.uint64(0x100000001B3)) ^ cand)


def green_ranks(key: int, v: int) -> np.ndarray:
    """R[prev, w]: rank of candidate w in the keyed order for previous token prev (each row a permutation)."""
    h = keyed_hash(key, np.arange(v), v)
    ranks = np.empty((v, v), dtype=np.int32)
    order = np.argsort(h, axis=1, kind="stable")
    np.put_along_axis(ranks, order, np.arange(v, dtype=np.int32)[None, :].repeat(v, 0), axis=1)
    return ranks


def green_size(gamma: float, v: int) -> int:
    return int(round(gamma * v))


def green_mask(key: int, prev: np.ndarray, v: int, gamma: float) -> np.ndarray:
    """Rows ``green_ranks(key, v)[prev] < green_size(gamma, v)`` without the V x V table (LLM vocabularies):
    the green list after each previous token is its green_size lowest keyed hashes."""
    h = keyed_hash(key, prev, v)
    size = green_size(gamma, v)
    return h <= np.partition(h, size - 1, axis=1)[:, size - 1 : size]


def is_green(key: int, prev: np.ndarray, tokens: np.ndarray, v: int, gamma: float, chunk: int = 64) -> np.ndarray:
    """Whether each token is in the green list of its previous token (same shapes), a few rows of V at a time."""
    flat_prev, flat_tok = np.ravel(prev), np.ravel(tokens)
    out = np.empty(flat_tok.size, dtype=bool)
    for s in range(0, flat_tok.size, chunk):
        mask = green_mask(key, flat_prev[s : s + chunk], v, gamma)
        out[s : s + chunk] = mask[np.arange(mask.shape[0]), flat_tok[s : s + chunk]]
    return out.reshape(np.shape(tokens))


def first_occurrences(prev: np.ndarray, tokens: np.ndarray, v: int) -> np.ndarray:
    """Scored mask: True where the (previous, token) pair appears for the first time in its row."""
    pair = prev * v + tokens
    mask = np.zeros(pair.shape, dtype=bool)
    for i, row in enumerate(pair):
        _, first = np.unique(row, return_index=True)
        mask[i, first] = True
    return mask
