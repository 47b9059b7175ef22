"""Empirical linear rates: least-squares slope of log error against iterations (or oracle calls)."""

from __future__ import annotations

import numpy as np


def linear_phase(error: np.ndarray, burn_in: float, floor: float, drop: float = 1e-2) -> np.ndarray:
    """Indices of the linear phase: from the end of the transient (the first iterate with error below
    ``drop`` times the initial error, or the first ``burn_in`` fraction of the run if that comes first)
    until the error first falls below ``floor`` (the round-off plateau); finite, positive errors only."""
    n = len(error)
    dropped = np.flatnonzero(error <= drop * error[0])
    start = min(int(burn_in * (n - 1)), dropped[0] if dropped.size else n)
    below = np.flatnonzero(error <= floor)
    stop = below[0] if below.size else n
    idx = np.arange(start, max(stop, start))
    return idx[np.isfinite(error[idx]) & (error[idx] > 0)]


def fit_rate(error: np.ndarray, x: np.ndarray, burn_in: float, floor: float) -> dict[str, float]:
    """Slope of log(error) against ``x`` over the linear phase, the contraction exp(slope) and the fit's R^2.

    If fewer than 3 points remain, the phase restarts at 0 so very fast runs are still fitted.
    Diverged runs (any non-finite error) get slope +inf and R^2 nan.
    """
    if not np.all(np.isfinite(error)):
        return {"slope": np.inf, "rate": np.inf, "r2": np.nan, "points": 0}
    idx = linear_phase(error, burn_in, floor)
    if idx.size < 3:
        idx = linear_phase(error, 0.0, floor)
    if idx.size < 3:
        return {"slope": np.nan, "rate": np.nan, "r2": np.nan, "points": int(idx.size)}
    t, log_e = x[idx].astype(float), np.log(error[idx])
    slope, intercept = np.polyfit(t, log_e, 1)
    resid = log_e - (slope * t + intercept)
    total = np.sum((log_e - log_e.mean()) ** 2)
    r2 = 1.0 - np.sum(resid**2) / total if total > 0 else np.nan
    return {"slope": float(slope), "rate": float(np.exp(slope)), "r2": float(r2), "points": int(idx.size)}
