"""Regularised empirical risk minimisation: (1/n) sum_i rho(y_i theta^T x_i) + reg(theta).

Square loss with the ridge penalty has a closed form; everything else goes through scipy's L-BFGS (O(np) per
iteration, so it scales to p in the thousands), polished by damped Newton steps with the exact Hessian
whenever L-BFGS stops above a gradient norm of 1e-8 (a loose tolerance biases theta_hat,
which would show up as a fake breakdown of the prediction).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from repro.papers.cgmt_erm import losses


def ridge(X: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """argmin (1/2n)|y - X theta|^2 + lam/2 |theta|^2 = (X^T X / n + lam I)^{-1} X^T y / n."""
    n, p = X.shape
    return np.linalg.solve(X.T @ X / n + lam * np.eye(p), X.T @ y / n)


GRAD_TOL = 1e-8


def fit(
    X: np.ndarray,
    y: np.ndarray,
    loss: str,
    lam: float,
    *,
    reg: str = "l2",
    huber_c: float = 1.0,
    shift: np.ndarray | None = None,
) -> np.ndarray:
    """Minimise the ERM objective.

    reg: 'l2' (lam/2 |theta|^2), 'pseudo_huber' (see losses.pseudo_huber) or 'surrogate'
    (lam/2 |theta|^2 + shift^T theta).
    """
    if loss == "square" and reg == "l2":
        return ridge(X, y, lam)
    n, p = X.shape
    Z = X * y[:, None]

    def hessian(theta: np.ndarray) -> np.ndarray:
        h = Z.T @ (losses.second_derivative(loss, Z @ theta)[:, None] * Z) / n
        if reg == "pseudo_huber":
            h[np.diag_indices(p)] += lam * (1.0 + (theta / huber_c) ** 2) ** -1.5
        else:
            h[np.diag_indices(p)] += lam
        return h

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        r = Z @ theta
        f = float(np.mean(losses.value(loss, r)))
        g = Z.T @ losses.derivative(loss, r) / n
        if reg == "pseudo_huber":
            rv, rg = losses.pseudo_huber(theta, lam, huber_c)
            return f + rv, g + rg
        f, g = f + 0.5 * lam * theta @ theta, g + lam * theta
        if reg == "surrogate":
            f, g = f + shift @ theta, g + shift
        elif reg != "l2":
            raise ValueError(f"unknown regulariser {reg!r}")
        return f, g

    start = ridge(X, y, lam) if reg == "l2" else np.zeros(p)
    theta = minimize(
        objective,
        start,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20_000, "gtol": 1e-12, "ftol": 1e-16, "maxcor": 30},
    ).x
    grad_norm = float(np.linalg.norm(objective(theta)[1]))
    if grad_norm > GRAD_TOL:
        theta = _newton(objective, hessian, theta)
        grad_norm = float(np.linalg.norm(objective(theta)[1]))
    if grad_norm > GRAD_TOL:
        raise RuntimeError(f"ERM solver did not converge ({loss}, {reg}): gradient norm {grad_norm:.2e}")
    return theta


def _newton(objective, hessian, theta: np.ndarray, max_iter: int = 50) -> np.ndarray:
    """Damped Newton with Armijo backtracking (the objective is lam-strongly convex, so the Hessian is SPD)."""
    f, g = objective(theta)
    for _ in range(max_iter):
        step = -np.linalg.solve(hessian(theta), g)
        if -(g @ step) < 1e-24:
            break
        t = 1.0
        f_new, g_new = objective(theta + step)
        while f_new > f + 1e-4 * t * (g @ step) and t > 1e-6:
            t *= 0.5
            f_new, g_new = objective(theta + t * step)
        theta, f, g = theta + t * step, f_new, g_new
    return theta
