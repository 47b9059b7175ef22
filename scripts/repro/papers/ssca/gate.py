"""The calibrated reliability gate: flag a batch whose Gaussianized views drift from the reference copula.

Statistic of a batch of n rows (soft-Gaussianized against the training reference): per coordinate,
n * mean^2 + n/2 * (var - 1)^2 (each about chi^2_1 under no drift), averaged over coordinates and views.
Threshold: the split-conformal (1 - alpha) quantile of the statistic on clean calibration batches, the
ceil((B + 1)(1 - alpha))-th smallest of B, so a fresh clean batch raises a false alarm with
probability <= alpha. The miss rate on drifted batches is the price of that target.
"""

from __future__ import annotations

import math

import numpy as np


def statistic(views: list[np.ndarray]) -> float:
    parts = []
    for g in views:
        n = g.shape[0]
        parts.append(n * g.mean(axis=0) ** 2 + n / 2 * (g.var(axis=0) - 1) ** 2)
    return float(np.mean(np.concatenate(parts)))


def conformal_threshold(scores: np.ndarray, alpha: float) -> float:
    """The ceil((B+1)(1-alpha))-th smallest calibration score (inf when B is too small for alpha)."""
    rank = math.ceil((scores.size + 1) * (1 - alpha))
    return float(np.sort(scores)[rank - 1]) if rank <= scores.size else float("inf")
