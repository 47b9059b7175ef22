"""Metrics shared across papers. Each one is checked in tests against an independent formula."""

from __future__ import annotations

import numpy as np
from scipy import stats


def rmse(pred: np.ndarray, true: np.ndarray) -> float:
    """Root mean squared error over all entries, ignoring entries where either is NaN."""
    pred, true = np.asarray(pred, float), np.asarray(true, float)
    ok = np.isfinite(pred) & np.isfinite(true)
    return float(np.sqrt(np.mean((pred[ok] - true[ok]) ** 2)))


def mae(pred: np.ndarray, true: np.ndarray) -> float:
    """Mean absolute error over all finite pairs."""
    pred, true = np.asarray(pred, float), np.asarray(true, float)
    ok = np.isfinite(pred) & np.isfinite(true)
    return float(np.mean(np.abs(pred[ok] - true[ok])))


def r2(pred: np.ndarray, true: np.ndarray) -> float:
    """Coefficient of determination 1 - SS_res / SS_tot (the Nash-Sutcliffe efficiency)."""
    pred, true = np.asarray(pred, float), np.asarray(true, float)
    ok = np.isfinite(pred) & np.isfinite(true)
    resid = np.sum((pred[ok] - true[ok]) ** 2)
    total = np.sum((true[ok] - true[ok].mean()) ** 2)
    return float(1.0 - resid / total)


nse = r2


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rank correlation."""
    return float(stats.spearmanr(np.asarray(a, float), np.asarray(b, float)).statistic)


def mean_sd(values: list[float] | np.ndarray) -> dict[str, float]:
    """Mean and sample standard deviation (ddof=1; 0 for a single value) for tables."""
    arr = np.asarray(values, float)
    return {"mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0, "n": int(arr.size)}
