"""Margin losses rho(r), r = y theta^T x, with derivatives and proximal operators; C^2 regularisers.

The fixed-point equations need prox_{g rho}(w) = argmin_r rho(r) + (r - w)^2 / (2 g), which has a closed form
for the square and squared-hinge losses and is solved by a vectorised safeguarded Newton iteration for the
logistic loss.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

LOSSES = ("square", "logistic", "squared_hinge")


def value(loss: str, r: np.ndarray) -> np.ndarray:
    """rho(r)."""
    if loss == "square":
        return 0.5 * (1.0 - r) ** 2
    if loss == "logistic":
        return np.logaddexp(0.0, -r)
    if loss == "squared_hinge":
        return 0.5 * np.maximum(1.0 - r, 0.0) ** 2
    raise ValueError(f"unknown loss {loss!r}; expected one of {LOSSES}")


def derivative(loss: str, r: np.ndarray) -> np.ndarray:
    """rho'(r)."""
    if loss == "square":
        return r - 1.0
    if loss == "logistic":
        return -expit(-r)
    if loss == "squared_hinge":
        return -np.maximum(1.0 - r, 0.0)
    raise ValueError(f"unknown loss {loss!r}; expected one of {LOSSES}")


def second_derivative(loss: str, r: np.ndarray) -> np.ndarray:
    """rho''(r) (the squared hinge's is its a.e. derivative, 1 on r < 1)."""
    if loss == "square":
        return np.ones_like(r)
    if loss == "logistic":
        s = expit(r)
        return s * (1.0 - s)
    if loss == "squared_hinge":
        return (r < 1.0).astype(float)
    raise ValueError(f"unknown loss {loss!r}; expected one of {LOSSES}")


def prox(loss: str, w: np.ndarray, g: float) -> np.ndarray:
    """prox_{g rho}(w): the r solving r + g rho'(r) = w."""
    w = np.asarray(w, float)
    if loss == "square":
        return (w + g) / (1.0 + g)
    if loss == "squared_hinge":
        return np.where(w >= 1.0, w, (w + g) / (1.0 + g))
    if loss == "logistic":
        r = w.copy()
        for _ in range(100):
            step = (r + g * derivative(loss, r) - w) / (1.0 + g * second_derivative(loss, r))
            r -= step
            if np.max(np.abs(step)) < 1e-13:
                break
        return r
    raise ValueError(f"unknown loss {loss!r}; expected one of {LOSSES}")


def pseudo_huber(theta: np.ndarray, lam: float, c: float) -> tuple[float, np.ndarray]:
    """r(theta) = lam sum_j c^2 (sqrt(1 + theta_j^2 / c^2) - 1) and its gradient; Hessian at 0 is lam I."""
    root = np.sqrt(1.0 + (theta / c) ** 2)
    return float(lam * c**2 * np.sum(root - 1.0)), lam * theta / root


def quadratic_surrogate_shift(mean: np.ndarray, lam: float, c: float) -> np.ndarray:
    """Linear term b of the quadratic surrogate lam/2 |theta|^2 + b^T theta of the pseudo-Huber regulariser.

    The surrogate keeps the Hessian at zero (lam I) and matches the gradient at the estimator's mean mu:
    lam mu + b = grad r(mu).
    """
    return pseudo_huber(mean, lam, c)[1] - lam * mean
