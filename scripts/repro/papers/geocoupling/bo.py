"""Outer loop of the bi-level search: a Gaussian-process surrogate of validation quality over log(alpha)
with expected improvement, several proposals per round by the kriging-believer heuristic."""

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
