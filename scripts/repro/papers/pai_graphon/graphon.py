"""Empirical graphons of binary masks and the statistics built on them.

A mask M (out_nodes x in_nodes) is turned into a B x B step function by ordering the nodes of each side and
averaging M over the blocks. The ordering must be fixed before averaging: by degree (descending) it reveals
the limiting shape of heterogeneous graphons; by index (the i.i.d. initialisation makes it a random order)
it tests flatness. Cut distance is NP-hard; the L2 distance between step functions is used instead.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


def block_average(mask: np.ndarray, blocks: int, row_order=None, col_order=None) -> np.ndarray:
    """Mean of ``mask`` over a blocks x blocks grid after reordering rows and columns (sizes divisible)."""
    m = np.asarray(mask, float)
    if row_order is not None:
        m = m[row_order]
    if col_order is not None:
        m = m[:, col_order]
    rows, cols = m.shape
    if rows % blocks or cols % blocks:
        raise ValueError(f"mask of shape {m.shape} is not divisible into {blocks} x {blocks} blocks")
    return m.reshape(blocks, rows // blocks, blocks, cols // blocks).mean(axis=(1, 3))


def degree_order(mask: np.ndarray, axis: int) -> np.ndarray:
    """Node order by degree, highest first (axis=1: rows by their row sums; axis=0: columns by column sums)."""
    return np.argsort(-np.asarray(mask).sum(axis=axis), kind="stable")


def degree_sorted_graphon(mask: np.ndarray, blocks: int) -> np.ndarray:
    """Block graphon with rows and columns ordered by degree."""
    return block_average(mask, blocks, degree_order(mask, 1), degree_order(mask, 0))


def l2_distance(a: np.ndarray, b: np.ndarray) -> float:
    """L2 distance between two step functions on the same B x B grid of the unit square."""
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


def degree_cv(mask: np.ndarray, axis: int) -> float:
    """Coefficient of variation of node degrees (axis=1: degree of each row node over its row)."""
    deg = np.asarray(mask).sum(axis=axis).astype(float)
    return float(deg.std() / deg.mean())


def binomial_cv(density: float, candidates: int) -> float:
    """CV of a Binomial(candidates, density) degree: sqrt((1 - p) / (p m))."""
    return float(np.sqrt((1.0 - density) / (density * candidates)))


def flatness_z(graphon: np.ndarray, density: float, entries_per_block: int) -> float:
    """Largest |block mean - density| in binomial standard errors."""
    se = np.sqrt(density * (1.0 - density) / entries_per_block)
    return float(np.max(np.abs(graphon - density)) / se)


def bonferroni_z(n_blocks: int, level: float = 0.05) -> float:
    """Two-sided normal quantile at level / n_blocks (threshold for the largest of n_blocks z-scores)."""
    return float(norm.ppf(1.0 - level / (2.0 * n_blocks)))


def log_log_slope(widths, distances) -> float:
    """Least-squares slope of log(distance) against log(width)."""
    return float(np.polyfit(np.log(widths), np.log(distances), 1)[0])
