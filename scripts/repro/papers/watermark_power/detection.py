"""The detectors and their rates, shared by the n-gram grid (evaluate) and the real-LM validation stage.

Kept apart from evaluate so that the validation stage does not depend on the claims and reported numbers.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom, norm

from repro.papers.watermark_power.theory import z_score
from repro.reporting.claims import binomial_interval


def detected(green: np.ndarray, scored: np.ndarray, gamma: float, alpha: float) -> np.ndarray:
    """One-sided z-test of the green count at level ``alpha`` (the paper's detector)."""
    return z_score(green, scored, gamma) > norm.isf(alpha)


def detected_exact(green: np.ndarray, scored: np.ndarray, gamma: float, alpha: float) -> np.ndarray:
    """Exact one-sided binomial test of the green count."""
    t, g = scored.sum(axis=1), (green & scored).sum(axis=1)
    return binom.sf(g - 1, t, gamma) < alpha


def rate(hits: np.ndarray) -> dict:
    """Detection rate with its Clopper-Pearson interval."""
    m = binomial_interval(int(np.sum(hits)), int(hits.size))
    return {"rate": m.value, "low": m.interval.low, "high": m.interval.high, "n": int(hits.size)}
