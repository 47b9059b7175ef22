"""Clipped soft-rank Gaussianization against a reference set, with its error tracking.

Each coordinate of a view is mapped through its rank among a reference sample: u = (r + 1/2)/(m + 1),
clipped to [clip, 1 - clip], then g = Phi^-1(u). With hard ranks the map is invariant to any strictly
increasing transform of the coordinate (the copula is kept, the marginals become standard normal);
the soft rank replaces the step function by a logistic of width ``eps`` robust reference scales
(IQR / 1.349, so heavy-tailed warped coordinates are not over-smoothed),
so the map is differentiable, at a cost the tracker measures (|u_soft - u_hard| and the share clipped).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, ndtri


def ranks(reference: np.ndarray, x: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """Rank of every entry of ``x`` (n, d) among the reference column (m, d): hard if eps == 0, else soft."""
    out = np.empty(x.shape)
    if eps == 0.0:
        for j in range(x.shape[1]):
            ref = np.sort(reference[:, j])
            below, upto = np.searchsorted(ref, x[:, j], "left"), np.searchsorted(ref, x[:, j], "right")
            out[:, j] = below + 0.5 * (upto - below)
        return out
    q75, q25 = np.percentile(reference, [75, 25], axis=0)
    scale = eps * np.maximum((q75 - q25) / 1.349, np.finfo(float).tiny)
    for j in range(x.shape[1]):
        out[:, j] = expit((x[:, j, None] - reference[None, :, j]) / scale[j]).sum(axis=1)
    return out


def gaussianize(reference: np.ndarray, x: np.ndarray, eps: float = 0.0, clip: float = 1e-3) -> np.ndarray:
    """Phi^-1 of the clipped rank quantile of ``x`` against ``reference`` (per coordinate)."""
    u = (ranks(reference, x, eps) + 0.5) / (reference.shape[0] + 1)
    return ndtri(np.clip(u, clip, 1 - clip))


def tracked(reference: np.ndarray, x: np.ndarray, eps: float, clip: float) -> tuple[np.ndarray, dict]:
    """Soft Gaussianization plus its error against the hard map (quantile and normal-score scale)."""
    m = reference.shape[0] + 1
    u_soft = (ranks(reference, x, eps) + 0.5) / m
    u_hard = (ranks(reference, x) + 0.5) / m
    g_soft = ndtri(np.clip(u_soft, clip, 1 - clip))
    g_hard = ndtri(np.clip(u_hard, clip, 1 - clip))
    errors = {
        "max_quantile_error": float(np.max(np.abs(u_soft - u_hard))),
        "mean_quantile_error": float(np.mean(np.abs(u_soft - u_hard))),
        "mean_score_error": float(np.mean(np.abs(g_soft - g_hard))),
        "clipped_share": float(np.mean((u_soft < clip) | (u_soft > 1 - clip))),
    }
    return g_soft, errors
