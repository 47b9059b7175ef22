"""Cruel/cool split, candidate enumeration for the cruel bits, and stepwise regression for the cool bits.

- Cruel columns: those whose reduced entries keep a std above ``threshold`` times the uniform std q / sqrt(12).
- Attempts: cruel-support candidates are tried by weight (0, 1, 2, ...) and, within a weight, by the sum of
  the coordinates' ranks under a score (the model's distinguisher, or a random order for the exhaustive CC
  baseline); attempts = 1-based position of the true support in that order (ties count half).
- Cool bits given the cruel ones: y = centre(Rb - RA_cruel s_cruel) = RA_cool s_cool + R e with no modular
  wrap. Forward stepwise regression adds the column that most reduces the residual sum of squares while the
  partial F-test p-value is below alpha, at most h minus the number of cruel bits terms (h is known to the
  attacker); the one-shot per-column baseline (CC style) keeps the same number of columns, ranked by the
  marginal regression t-statistic. Both stop rules matter because the error vector e is shared by all reduced
  rows, so R e correlates weakly with every column and an F-test alone admits spurious columns.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
from scipy import stats

from repro.papers.lwe.lwe import centre


def column_ratio(ra: np.ndarray, q: int) -> np.ndarray:
    return ra.std(axis=0) / (q / np.sqrt(12.0))


def cruel_columns(ra: np.ndarray, q: int, threshold: float) -> np.ndarray:
    return np.flatnonzero(column_ratio(ra, q) > threshold)


def attempts(score: np.ndarray, support: np.ndarray) -> float:
    """Position of ``support`` (indices into score) when candidates go by weight, then by rank sum."""
    c, w = score.size, support.size
    rank = np.empty(c, dtype=int)
    rank[np.argsort(-score, kind="stable")] = np.arange(c)
    before = int(np.sum([comb(c, j) for j in range(w)]))
    target = int(np.sum(rank[support]))
    sums = np.array([np.sum(rank[list(s)]) for s in combinations(range(c), w)]) if w else np.zeros(1)
    return float(before + np.sum(sums < target) + (np.sum(sums == target) + 1) / 2)


def expected_exhaustive_attempts(c: int, w: int) -> float:
    """Mean attempts of the exhaustive (random-order) search: all lighter candidates, then half the rest."""
    return float(np.sum([comb(c, j) for j in range(w)]) + (comb(c, w) + 1) / 2)


def cool_target(rb: np.ndarray, ra: np.ndarray, cruel: np.ndarray, s: np.ndarray, q: int) -> np.ndarray:
    return centre(rb - ra[:, cruel] @ s[cruel], q).astype(float)


def _rss(x: np.ndarray, y: np.ndarray) -> float:
    if x.shape[1] == 0:
        return float(y @ y)
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    r = y - x @ coef
    return float(r @ r)


def stepwise(x: np.ndarray, y: np.ndarray, alpha: float, max_terms: int) -> list[int]:
    """Forward selection by residual sum of squares with a partial F-test stop (no intercept: y is centred)."""
    chosen: list[int] = []
    current = _rss(x[:, chosen], y)
    n = y.size
    while len(chosen) < max_terms:
        candidates = [j for j in range(x.shape[1]) if j not in chosen]
        if not candidates:
            break
        rss = np.array([_rss(x[:, chosen + [j]], y) for j in candidates])
        best = int(np.argmin(rss))
        dof = n - len(chosen) - 1
        f = (current - rss[best]) / (rss[best] / dof)
        if stats.f.sf(f, 1, dof) >= alpha:
            break
        chosen.append(candidates[best])
        current = float(rss[best])
    return sorted(chosen)


def per_column(x: np.ndarray, y: np.ndarray, count: int) -> list[int]:
    """The ``count`` columns with the largest marginal least-squares t-statistic (one test per column)."""
    t = np.array([stats.linregress(x[:, j], y).rvalue for j in range(x.shape[1])])
    return sorted(np.argsort(-t)[:count].tolist()) if count else []
