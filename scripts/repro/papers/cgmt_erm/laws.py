"""Predicted laws of the test projection theta_hat^T x and their distances to the empirical law.

All laws are compared on one uniform grid: the empirical CDF of the pooled projections (reps x test points)
against each predicted CDF. The predicted laws are Gaussian mixtures; the convolution prediction has one
component per test point, so its CDF is evaluated by binning the component means on the grid and convolving
with the Gaussian CDF kernel (FFT), which keeps it exact up to half a grid step in location.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import fftconvolve
from scipy.stats import norm

GRID_POINTS = 4097


@dataclass(frozen=True)
class Moments:
    """Semi-empirical ingredients of the prediction from R fits of theta_hat (rep, feature) and test X.

    mean_proj: mu^T x_t per test point (mu = mean of the fits);
    fluct_var: tr(C E[x x^T]) estimated as the unbiased mean of ((theta_r - mu)^T x_t)^2.
    """

    mean_proj: np.ndarray
    fluct_var: float
    reps: int

    @classmethod
    def from_fits(cls, thetas: np.ndarray, X_test: np.ndarray) -> Moments:
        reps = len(thetas)
        if reps < 2:
            raise ValueError("need at least two fits to estimate the fluctuation variance")
        mu = thetas.mean(0)
        fluct = (thetas - mu) @ X_test.T
        return cls(X_test @ mu, float(np.mean(fluct**2) * reps / (reps - 1)), reps)

    def held_out(self) -> Moments:
        """The moments as a prediction for fits they were not estimated from: the estimated mean mu_hat differs
        from mu by noise of covariance C / reps, so mu_hat^T x already carries tr(C E[xx^T]) / reps of the
        fluctuation variance and the Gaussian part keeps the rest, (1 - 1/reps) tr(C E[xx^T])."""
        return Moments(self.mean_proj, self.fluct_var * (1.0 - 1.0 / self.reps), self.reps)


def grid_for(samples: np.ndarray, pad: float = 0.25) -> np.ndarray:
    """Uniform grid covering the samples with a margin of ``pad`` times their range."""
    lo, hi = float(samples.min()), float(samples.max())
    span = hi - lo
    return np.linspace(lo - pad * span, hi + pad * span, GRID_POINTS)


def empirical_cdf(samples: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Fraction of samples <= each grid point."""
    return np.searchsorted(np.sort(samples.ravel()), grid, side="right") / samples.size


def gaussian_mixture_cdf(
    grid: np.ndarray, means: np.ndarray, var: float | np.ndarray, weights: np.ndarray | None = None
) -> np.ndarray:
    """CDF of sum_k w_k N(means_k, var_k) on the grid (direct evaluation; for few components)."""
    means = np.atleast_1d(np.asarray(means, float))
    sd = np.sqrt(np.broadcast_to(np.asarray(var, float), means.shape))
    w = np.full(means.shape, 1.0 / means.size) if weights is None else np.asarray(weights, float)
    return norm.cdf((grid[:, None] - means[None, :]) / sd[None, :]) @ w


def convolution_cdf(grid: np.ndarray, mean_proj: np.ndarray, fluct_var: float) -> np.ndarray:
    """CDF of (1/T) sum_t N(mean_proj_t, fluct_var) on the uniform grid, via binning and FFT convolution."""
    h = grid[1] - grid[0]
    idx = np.clip(np.rint((mean_proj - grid[0]) / h).astype(int), 0, grid.size - 1)
    mass = np.bincount(idx, minlength=grid.size) / mean_proj.size
    offsets = np.arange(-(grid.size - 1), grid.size) * h
    kernel = norm.cdf(offsets / np.sqrt(fluct_var))
    full = fftconvolve(mass, kernel)
    return np.clip(full[grid.size - 1 : 2 * grid.size - 1], 0.0, 1.0)


def gaussian_cdf(grid: np.ndarray, m: Moments) -> np.ndarray:
    """Gaussian-universality prediction: x replaced by a Gaussian of matched mean and covariance, so
    theta_hat^T x ~ N(mean of mu^T x, var of mu^T x + tr(C E[x x^T]))."""
    return norm.cdf((grid - m.mean_proj.mean()) / np.sqrt(m.mean_proj.var() + m.fluct_var))


def gaussian_mixture_equivalent_cdf(grid: np.ndarray, m: Moments, y_test: np.ndarray) -> np.ndarray:
    """Gaussian-mixture equivalent: a Gaussian per class with the class-conditional mean and covariance of x."""
    classes = np.unique(y_test)
    means = np.array([m.mean_proj[y_test == c].mean() for c in classes])
    var = np.array([m.mean_proj[y_test == c].var() + m.fluct_var for c in classes])
    weights = np.array([np.mean(y_test == c) for c in classes])
    return gaussian_mixture_cdf(grid, means, var, weights)


def ks_distance(cdf_a: np.ndarray, cdf_b: np.ndarray) -> float:
    """Kolmogorov-Smirnov distance sup |F_a - F_b| over the grid."""
    return float(np.max(np.abs(cdf_a - cdf_b)))


def wasserstein1(cdf_a: np.ndarray, cdf_b: np.ndarray, grid: np.ndarray) -> float:
    """1-Wasserstein distance: integral of |F_a - F_b| over the grid (trapezoid rule)."""
    return float(np.trapezoid(np.abs(cdf_a - cdf_b), grid))


def ks_tolerance(n_test: int, delta: float) -> float:
    """Tolerance on a KS distance: the DKW bound for n_test test points at level delta (the sampling error of
    the test points, which every prediction and the empirical law share)."""
    return float(np.sqrt(np.log(2.0 / delta) / (2.0 * n_test)))
