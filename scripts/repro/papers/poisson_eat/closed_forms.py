"""Campbell's-theorem moments of EAT's soft count, and the temperature check (numpy only, no torch).

For a rate-lambda Poisson process on [0, inf) and an indicator f, z = sum_k f(T_k) has
E[z] = lambda int f and Var[z] = lambda int f^2.
"""

from __future__ import annotations

import numpy as np

INDICATORS = ("sigmoid", "cubic", "linear", "cosine")


def check_tau(indicator: str, tau: float) -> None:
    """Compact indicators put mass on [1 - tau, 1 + tau]; tau > 1 would cross t = 0 and break E[z] = lambda."""
    if indicator not in INDICATORS:
        raise ValueError(f"unknown indicator {indicator!r}; choose from {INDICATORS}")
    if tau <= 0:
        raise ValueError(f"temperature must be positive, got {tau}")
    if indicator != "sigmoid" and tau > 1:
        raise ValueError(f"{indicator} indicator needs tau <= 1 (support [1 - tau, 1 + tau]), got {tau}")


def eat_moments(rate: float, tau: float, kind: str) -> tuple[float, float]:
    """Closed-form mean and variance of EAT's soft count (Campbell's theorem)."""
    check_tau(kind, tau)
    if kind == "sigmoid":
        softplus = tau * np.logaddexp(0.0, 1.0 / tau)
        sig = 1.0 / (1.0 + np.exp(-1.0 / tau))
        return rate * softplus, rate * (softplus - tau * sig)
    second = {"cubic": 1.0 - 9.0 * tau / 35.0, "linear": 1.0 - tau / 3.0, "cosine": 1.0 - tau / 4.0}[kind]
    return float(rate), rate * second
