"""Fidelity and gradient-quality metrics, written from their definitions (numpy, float64)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import stats


def w1_to_discrete(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    """Wasserstein-1 between the empirical law of ``samples`` and a discrete law: int |F_z(x) - F(x)| dx.

    Both CDFs are step functions, so the integral is exact on the merged breakpoints.
    """
    samples = np.sort(np.asarray(samples, dtype=float))
    support = np.asarray(support, dtype=float)
    grid = np.union1d(samples, support)
    f_emp = np.searchsorted(samples, grid, side="right") / samples.size
    f_law = np.cumsum(pmf)[np.searchsorted(support, grid, side="right") - 1]
    f_law = np.where(grid < support[0], 0.0, f_law)
    return float(np.sum(np.abs(f_emp - f_law)[:-1] * np.diff(grid)))


def poisson_law(rate: float, eps: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Support {0..K} and pmf of Poisson(rate), K the (1 - eps) quantile (tail mass folded into the last atom)."""
    k = np.arange(int(stats.poisson.ppf(1.0 - eps, rate)) + 1)
    pmf = stats.poisson.pmf(k, rate)
    pmf[-1] += 1.0 - pmf.sum()
    return k, pmf


def negative_binomial_law(shape: float, rate: float, eps: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Support and pmf of the Gamma(shape, rate)-Poisson mixture, i.e. NB(shape, p = rate / (1 + rate))."""
    p = rate / (1.0 + rate)
    k = np.arange(int(stats.nbinom.ppf(1.0 - eps, shape, p)) + 1)
    pmf = stats.nbinom.pmf(k, shape, p)
    pmf[-1] += 1.0 - pmf.sum()
    return k, pmf


def exact_poisson_gradient(g: Callable[[np.ndarray], np.ndarray], rate: float) -> float:
    """d/d lambda E[g(N)] for N ~ Poisson(lambda), by the identity E[g(N + 1) - g(N)]."""
    k, pmf = poisson_law(rate, eps=1e-15)
    return float(np.sum(pmf * (g(k + 1.0) - g(k))))


def gradient_quality(per_sample: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    """BiasEnergy ||E g^ - g*||^2, NoiseEnergy E||g^ - E g^||^2 and cosine(E g^, g*).

    ``per_sample`` has shape (draws, dims): one single-sample gradient estimate per row.
    """
    mean = per_sample.mean(axis=0)
    bias = float(np.sum((mean - reference) ** 2))
    noise = float(np.mean(np.sum((per_sample - mean) ** 2, axis=1)))
    cosine = float(mean @ reference / (np.linalg.norm(mean) * np.linalg.norm(reference)))
    return {"bias_energy": bias, "noise_energy": noise, "cosine": cosine}


def mean_zscore(samples: np.ndarray, target: float) -> float:
    """(sample mean - target) in Monte-Carlo standard errors."""
    return float((samples.mean() - target) / (samples.std(ddof=1) / np.sqrt(samples.size)))


def variance_se(samples: np.ndarray) -> float:
    """Standard error of the sample variance, sqrt((m4 - s^4) / n) (large-sample, any law with a 4th moment)."""
    centred = samples - samples.mean()
    var = centred.var(ddof=1)
    return float(np.sqrt(np.maximum(np.mean(centred**4) - var**2, 1e-300) / samples.size))


def variance_zscore(samples: np.ndarray, target: float) -> float:
    """(sample variance - target) in standard errors of the sample variance."""
    return float((samples.var(ddof=1) - target) / variance_se(samples))


def poisson_kl(posterior_rate, prior_rate, xp=np):
    """KL(Pois(r delta) || Pois(r)) = r (1 - delta + delta log delta), elementwise (numpy or torch via ``xp``)."""
    delta = posterior_rate / prior_rate
    return prior_rate * (1.0 - delta + delta * xp.log(delta))
