"""Outer loop of the bi-level search: a Gaussian-process surrogate of validation quality over log(alpha)
with expected improvement, several proposals per round by the kriging-believer heuristic, and the loop itself."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import norm
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel


def surrogate(x: np.ndarray, y: np.ndarray) -> GaussianProcessRegressor:
    kernel = ConstantKernel(1.0, (1e-2, 1e2)) * Matern(1.0, (0.1, 10.0), nu=2.5) + WhiteKernel(1e-3, (1e-6, 1e-1))
    gp = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=2, random_state=0)
    with warnings.catch_warnings():
        # A handful of noisy points often puts a hyper-parameter on its bound; the fit is still usable.
        warnings.simplefilter("ignore", ConvergenceWarning)
        return gp.fit(np.asarray(x, dtype=float)[:, None], np.asarray(y, dtype=float))


def expected_improvement(gp: GaussianProcessRegressor, grid: np.ndarray, best: float, xi: float = 0.01) -> np.ndarray:
    """EI of maximising the surrogate at each grid point."""
    mean, std = gp.predict(grid[:, None], return_std=True)
    std = np.maximum(std, 1e-9)
    z = (mean - best - xi) / std
    return (mean - best - xi) * norm.cdf(z) + std * norm.pdf(z)


def propose(x: np.ndarray, y: np.ndarray, low: float, high: float, count: int, grid: int = 201) -> list[float]:
    """``count`` new points of [low, high] (log alpha): EI maxima, each assuming the previous one scored its mean."""
    xs, ys = list(map(float, x)), list(map(float, y))
    points = np.linspace(low, high, grid)
    chosen = []
    for _ in range(count):
        gp = surrogate(np.array(xs), np.array(ys))
        ei = expected_improvement(gp, points, float(np.max(ys)))
        pick = float(points[int(np.argmax(ei))])
        chosen.append(pick)
        xs.append(pick)
        ys.append(float(gp.predict(np.array([[pick]]))[0]))
    return chosen


def search(evaluate, seeds: list[int], cfg: dict) -> dict[str, np.ndarray]:
    """The outer loop per seed: score the initial alphas, then ``rounds`` rounds of ``per_round`` GP-EI proposals.

    ``evaluate(candidates, round)`` gets {seed: [log alpha, ...]} and returns {seed: [score, ...]} (higher is
    better); every seed's candidates of one round are scored in one call (the generator trains them as one
    stack). Returns every evaluated log alpha, its score and its round, per seed (rows in ``seeds`` order).
    """
    low, high = np.log(cfg["alpha_range"][0]), np.log(cfg["alpha_range"][1])
    xs: dict[int, list[float]] = {s: [] for s in seeds}
    ys: dict[int, list[float]] = {s: [] for s in seeds}
    rounds: dict[int, list[int]] = {s: [] for s in seeds}
    candidates = {s: [float(np.log(a)) for a in cfg["initial"]] for s in seeds}
    for r in range(int(cfg["rounds"]) + 1):
        scores = evaluate(candidates, r)
        for s in seeds:
            xs[s] += candidates[s]
            ys[s] += [float(v) for v in scores[s]]
            rounds[s] += [r] * len(candidates[s])
        if r < int(cfg["rounds"]):
            candidates = {s: propose(np.array(xs[s]), np.array(ys[s]), low, high, int(cfg["per_round"])) for s in seeds}
    return {
        "search_log_alpha": np.array([xs[s] for s in seeds]),
        "search_score": np.array([ys[s] for s in seeds]),
        "search_round": np.array([rounds[s] for s in seeds]),
    }
