"""Semantic item IDs: residual k-means codes of item embeddings, made collision-free, and the fused embedding.

Residual quantisation (the RQ in RQ-VAE without the learned encoder, brief section 7 allows residual k-means):
level 1 clusters the standardised embeddings, each further level clusters what the previous levels left. Two
items may share all codes; a last disambiguation code (0, 1, ... within each group of equal codes) then makes
every ID unique. The alignment-centric fusion baseline quantises one fused embedding: the mean of the two
modalities projected onto their leading canonical directions (CCA), which keeps what the modalities share and
drops what only their combination shows.
"""

from __future__ import annotations

import numpy as np


def standardise(x: np.ndarray) -> np.ndarray:
    """Columns centred and scaled to unit variance (constant columns left at zero)."""
    x = np.asarray(x, dtype=np.float64)
    return (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1.0)


def kmeans(x: np.ndarray, k: int, rng: np.random.Generator, iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's algorithm from a k-means++ start: (labels (n,), centres (k, d)); empty clusters keep their centre."""
    n = len(x)
    k = min(k, n)
    centres = [x[rng.integers(n)]]
    dist = np.sum((x - centres[0]) ** 2, axis=1)
    for _ in range(1, k):
        p = dist / dist.sum() if dist.sum() > 0 else np.full(n, 1.0 / n)
        centres.append(x[rng.choice(n, p=p)])
        dist = np.minimum(dist, np.sum((x - centres[-1]) ** 2, axis=1))
    c = np.array(centres)
    labels = np.zeros(n, dtype=np.int64)
    for _ in range(iterations):
        d2 = np.sum(x**2, 1)[:, None] - 2 * x @ c.T + np.sum(c**2, 1)[None]
        labels = np.argmin(d2, axis=1)
        for j in range(k):
            members = labels == j
            if members.any():
                c[j] = x[members].mean(0)
    return labels, c


def residual_codes(x: np.ndarray, levels: int, codebook: int, seed: int, iterations: int = 20) -> np.ndarray:
    """(n, levels) codes in [0, codebook) of the standardised embeddings ``x`` by residual k-means."""
    rng = np.random.default_rng(seed)
    residual = standardise(x)
    codes = np.zeros((len(x), levels), dtype=np.int64)
    for level in range(levels):
        labels, centres = kmeans(residual, codebook, rng, iterations)
        codes[:, level] = labels
        residual = residual - centres[labels]
    return codes


def disambiguate(codes: np.ndarray) -> np.ndarray:
    """One more column numbering the items within each group of equal codes, so every row is unique."""
    out = np.zeros(len(codes), dtype=np.int64)
    seen: dict[tuple, int] = {}
    for i, row in enumerate(map(tuple, codes)):
        out[i] = seen.get(row, 0)
        seen[row] = out[i] + 1
    return np.concatenate([codes, out[:, None]], axis=1)


def collisions(ids: np.ndarray) -> int:
    """Number of items whose full ID equals an earlier item's."""
    return int(len(ids) - len(np.unique(ids, axis=0)))


def cca_fusion(a: np.ndarray, b: np.ndarray, dims: int, ridge: float = 1e-3) -> np.ndarray:
    """Mean of the two modalities' projections on their ``dims`` leading canonical directions."""
    a, b = standardise(a), standardise(b)
    n = len(a)

    def whitener(x: np.ndarray) -> np.ndarray:
        vals, vecs = np.linalg.eigh(x.T @ x / n + ridge * np.eye(x.shape[1]))
        return vecs @ np.diag(vals**-0.5) @ vecs.T

    wa, wb = whitener(a), whitener(b)
    u, _, vt = np.linalg.svd(wa @ (a.T @ b / n) @ wb)
    dims = min(dims, u.shape[1], vt.shape[0])
    return 0.5 * (a @ wa @ u[:, :dims] + b @ wb @ vt[:dims].T)
