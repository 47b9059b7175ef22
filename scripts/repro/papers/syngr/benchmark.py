"""The canonical benchmark file every producer writes and the training stage reads (one .npz per benchmark).

Arrays: ``text`` and ``image`` item features (n_items, d) float32 (``image`` is the second modality: image
features, or genre/year for MovieLens), ``codes_text``, ``codes_image``, ``codes_fused`` (n_items, levels)
residual-quantisation codes, and the users' chronological sequences as ``seq_items`` with ``seq_offsets``
(CSR layout); ``synergy`` (n_items,) is the planted bit where one exists (zeros otherwise).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from repro.papers.syngr.codes import cca_fusion, residual_codes
from repro.workflow.io import InputError, atomic_path

KEYS = ("text", "image", "codes_text", "codes_image", "codes_fused", "seq_items", "seq_offsets", "synergy")


@dataclass(frozen=True)
class Stored:
    """A benchmark as read back: features, code tables per modality and sequences."""

    text: np.ndarray
    image: np.ndarray
    codes: dict[str, np.ndarray]
    sequences: list[np.ndarray]
    synergy: np.ndarray


def quantise(text: np.ndarray, image: np.ndarray, settings: dict, seed: int) -> dict[str, np.ndarray]:
    """Residual k-means codes of each modality and of the CCA-fused embedding (settings: levels, codebook, ...)."""
    fused = cca_fusion(text, image, settings["fused_dims"])
    return {
        name: residual_codes(x, settings["levels"], settings["codebook"], seed + k, settings["iterations"])
        for k, (name, x) in enumerate((("text", text), ("image", image), ("fused", fused)))
    }


def write(
    path: str | os.PathLike,
    text: np.ndarray,
    image: np.ndarray,
    sequences: list[np.ndarray],
    codes: dict[str, np.ndarray],
    synergy: np.ndarray | None = None,
) -> None:
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    arrays = {
        "text": np.asarray(text, dtype=np.float32),
        "image": np.asarray(image, dtype=np.float32),
        "seq_items": np.concatenate(sequences).astype(np.int64),
        "seq_offsets": np.concatenate([[0], np.cumsum(lengths)]),
        "synergy": np.zeros(len(text), dtype=np.int8) if synergy is None else np.asarray(synergy, dtype=np.int8),
    } | {f"codes_{k}": v for k, v in codes.items()}
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)


def read(path: str | os.PathLike) -> Stored:
    """A benchmark file; a missing array or an item index outside the item table is named."""
    with np.load(path) as z:
        missing = [k for k in KEYS if k not in z.files]
        if missing:
            raise InputError(path, f"benchmark lacks arrays {missing}")
        a = {k: z[k] for k in KEYS}
    n = len(a["text"])
    if len(a["image"]) != n or a["seq_items"].min() < 0 or a["seq_items"].max() >= n:
        raise InputError(path, "item features of both modalities and the sequences' item indices disagree")
    off = a["seq_offsets"]
    return Stored(
        a["text"],
        a["image"],
        {k: a[f"codes_{k}"] for k in ("text", "image", "fused")},
        [a["seq_items"][off[i] : off[i + 1]] for i in range(len(off) - 1)],
        a["synergy"],
    )
