"""Block-spectral learning on the joint correlation of Gaussianized views, and Davis-Kahan diagnostics.

The joint correlation C of the concatenated views has within-view blocks C_mm and cross blocks C_mn.
Normalising by the block diagonal, M = D^-1/2 C D^-1/2 (D = blockdiag(C_mm) + ridge), the leading
eigenvectors of M are the multi-view canonical directions: projections that maximise the cross-block
spectrum. Davis-Kahan (Yu, Wang and Samworth 2015): ||sin Theta(V_hat, V)||_op <= 2 ||M_hat - M||_op / gap_k
with gap_k = lambda_k - lambda_{k+1} of M; we report sin Theta, the bound and their ratio.
"""

from __future__ import annotations

import numpy as np


def inv_sqrt(a: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eigh(a)
    return (v / np.sqrt(np.maximum(w, 1e-12))) @ v.T


def block_matrix(views: list[np.ndarray], ridge: float) -> tuple[np.ndarray, list[np.ndarray]]:
    """M = D^-1/2 C D^-1/2 of the standardised views, and the per-view D_mm^-1/2."""
    z = np.hstack([(v - v.mean(0)) / np.maximum(v.std(0), 1e-12) for v in views])
    c = z.T @ z / z.shape[0]
    edges = np.cumsum([0] + [v.shape[1] for v in views])
    whiten = [inv_sqrt(c[a:b, a:b] + ridge * np.eye(b - a)) for a, b in zip(edges[:-1], edges[1:])]
    d = np.zeros_like(c)
    for (a, b), w in zip(zip(edges[:-1], edges[1:]), whiten):
        d[a:b, a:b] = w
    return d @ c @ d, whiten


def top_subspace(m: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Leading k eigenvectors (columns) and all eigenvalues in decreasing order."""
    w, v = np.linalg.eigh(m)
    order = np.argsort(w)[::-1]
    return v[:, order[:k]], w[order]


def projections(m: np.ndarray, whiten: list[np.ndarray], k: int) -> list[np.ndarray]:
    """Per-view maps W_m = D_mm^-1/2 V_m from the leading eigenvectors V of M."""
    v, _ = top_subspace(m, k)
    edges = np.cumsum([0] + [w.shape[0] for w in whiten])
    return [w @ v[a:b] for w, a, b in zip(whiten, edges[:-1], edges[1:])]


def sin_theta(u: np.ndarray, v: np.ndarray) -> float:
    """Operator norm of sin Theta between the column spans of orthonormal u and v."""
    s = np.linalg.svd(u.T @ v, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - np.min(s) ** 2)))


def davis_kahan(m_ref: np.ndarray, m_hat: np.ndarray, k: int) -> dict:
    """Observed sin Theta of the top-k subspace, the eigengap-normalised bound and their ratio."""
    u, w = top_subspace(m_ref, k)
    u_hat, _ = top_subspace(m_hat, k)
    gap = float(w[k - 1] - w[k])
    perturbation = float(np.linalg.norm(m_hat - m_ref, 2))
    observed = sin_theta(u, u_hat)
    # A non-positive eigengap leaves the top-k subspace undefined and the bound without meaning: the ratio is
    # NaN (the check then fails and names it), never 0 (which would read as a bound that holds with room).
    bound = 2 * perturbation / gap if gap > 0 else float("nan")
    return {
        "sin_theta": observed,
        "bound": bound,
        "ratio": (observed / bound if bound > 0 else 0.0 if observed == 0 else float("nan"))
        if gap > 0
        else float("nan"),
        "eigengap": gap,
        "normalised_perturbation": perturbation / gap if gap > 0 else float("nan"),
    }
