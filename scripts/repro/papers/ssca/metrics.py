"""Cross-view retrieval Recall@K by cosine similarity (query i's pair is gallery item i)."""

from __future__ import annotations

import numpy as np


def recall_at_k(queries: np.ndarray, gallery: np.ndarray, ks: tuple[int, ...] = (1, 5, 10)) -> dict[str, float]:
    """Share of queries whose paired gallery item ranks within the top K (ties counted against us)."""
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    g = gallery / np.linalg.norm(gallery, axis=1, keepdims=True)
    sim = q @ g.T
    rank = np.sum(sim >= np.diag(sim)[:, None], axis=1)
    return {f"R@{k}": float(np.mean(rank <= k)) for k in ks}


def pair_ranks(queries: np.ndarray, gallery: np.ndarray) -> np.ndarray:
    """Per query, how many gallery items are at least as similar as its pair, minus one (0: ranked first)."""
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    g = gallery / np.linalg.norm(gallery, axis=1, keepdims=True)
    sim = q @ g.T
    return np.sum(sim >= np.diag(sim)[:, None], axis=1) - 1.0
