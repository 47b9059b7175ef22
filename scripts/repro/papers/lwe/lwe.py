"""LWE sampling and modular helpers in int64 (never float for products: q * n * max|R| stays below 2^62)."""

from __future__ import annotations

import numpy as np


def centre(x: np.ndarray, q: int) -> np.ndarray:
    """Representative in (-q/2, q/2]."""
    r = np.mod(x, q)
    return np.where(r > q // 2, r - q, r)


def binary_secret(rng: np.random.Generator, n: int, h: int) -> np.ndarray:
    s = np.zeros(n, dtype=np.int64)
    s[rng.choice(n, h, replace=False)] = 1
    return s


def rounded_gaussian(rng: np.random.Generator, size: int, sigma: float) -> np.ndarray:
    """Discrete (rounded) Gaussian error of width sigma, truncated at 6 sigma."""
    e = np.rint(rng.normal(0.0, sigma, size=size)).astype(np.int64)
    return np.clip(e, -int(6 * sigma), int(6 * sigma))


def lwe_samples(rng: np.random.Generator, a: np.ndarray, s: np.ndarray, q: int, sigma: float):
    e = rounded_gaussian(rng, a.shape[0], sigma)
    return np.mod(a @ s + e, q), e
