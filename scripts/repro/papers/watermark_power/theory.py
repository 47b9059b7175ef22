"""The power and distortion relations of green-list watermarking as functions of (gamma, delta, T, p(G)).

Per step, with green mass p(G) of the next-token distribution p, adding delta to green logits gives
  p~(G) = e^delta p(G) / (1 + (e^delta - 1) p(G))                       (watermarked green probability)
  KL(p~ || p) = delta p~(G) - log(1 + (e^delta - 1) p(G))               (exact distortion per step)
For high-entropy p, p(G) ~ gamma and p~(G) ~ gamma e^delta / (1 + gamma (e^delta - 1)). The number of
green tokens among T scored steps is Poisson-binomial(p~_t(G)); the one-sided z-test
z = (|G| - gamma T) / sqrt(T gamma (1 - gamma)) detects at level alpha with power
  1 - Phi((z_alpha sqrt(T gamma (1-gamma)) - sum_t (p~_t - gamma)) / sqrt(sum_t p~_t (1 - p~_t))).
The entropy of the contexts enters through the spread of p(G) around gamma.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


def green_prob(p_green: np.ndarray, delta: float) -> np.ndarray:
    a = np.expm1(delta)
    return (a + 1) * p_green / (1 + a * p_green)


def kl_per_step(p_green: np.ndarray, delta: float) -> np.ndarray:
    return delta * green_prob(p_green, delta) - np.log1p(np.expm1(delta) * p_green)


def high_entropy_green_prob(gamma: float, delta: float) -> float:
    return float(green_prob(np.asarray(gamma), delta))


def z_score(green: np.ndarray, scored: np.ndarray, gamma: float) -> np.ndarray:
    """z of each row over its scored positions (green, scored: (n, T) booleans)."""
    t = scored.sum(axis=1)
    g = (green & scored).sum(axis=1)
    return (g - gamma * t) / np.sqrt(np.maximum(t, 1) * gamma * (1 - gamma))


def power(p_tilde: np.ndarray, scored: np.ndarray, gamma: float, alpha: float) -> np.ndarray:
    """Predicted detection power of each row from its per-step watermarked green probabilities."""
    t = scored.sum(axis=1)
    shift = np.where(scored, p_tilde - gamma, 0).sum(axis=1)
    var = np.where(scored, p_tilde * (1 - p_tilde), 0).sum(axis=1)
    threshold = norm.isf(alpha) * np.sqrt(t * gamma * (1 - gamma))
    return norm.sf((threshold - shift) / np.sqrt(np.maximum(var, 1e-300)))


def power_formula(gamma: float, delta: float, t: int, alpha: float) -> float:
    """High-entropy closed form: every step has p(G) = gamma."""
    p = np.full((1, t), high_entropy_green_prob(gamma, delta))
    return float(power(p, np.ones((1, t), bool), gamma, alpha)[0])
