"""Fixed-point equations of the asymptotic prediction for the two-class Gaussian mixture (design 'mixture').

Model: x = y m + z, z ~ N(0, I_p), |m|^2 = s2, n = alpha p, estimator
theta_hat = argmin (1/n) sum rho(y_i theta^T x_i) + lam/2 |theta|^2. Because y x = m + (y z) with y z ~ N(0, I),
the training margins behave, through the leave-one-out (CGMT) argument, as r = prox_{gamma rho}(omega) with
omega = M + sqrt(Q) xi, xi ~ N(0, 1), where M = m^T theta_hat and Q = |theta_hat|^2. Three scalar equations
close the system (g = rho'(r) = (omega - r) / gamma, prox' = 1 / (1 + gamma rho''(r))):

  alpha gamma lam + alpha E[1 - prox'] = 1        (trace of the resolvent, Marchenko-Pastur form)
  lam M = -s2 E[g] - M E[(1 - prox') / gamma]     (stationarity projected on m, Stein's lemma)
  lam Q = -E[g r]                                 (stationarity dotted with theta_hat; exact identity)

The prediction for a fresh test point is then y theta_hat^T x ~ M + sqrt(Q) xi, i.e. theta_hat^T x follows
the mixture (N(M, Q) + N(-M, Q)) / 2, and E[theta_hat] = (M / s2) m. For the square loss the second equation
gives M = s2 / (s2 + 1 + lam (1 + gamma)), which tends to the population ridge value s2 / (1 + s2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.optimize import root
from scipy.stats import norm

from repro.papers.cgmt_erm import losses

NODES, WEIGHTS = hermegauss(161)
WEIGHTS = WEIGHTS / WEIGHTS.sum()


@dataclass(frozen=True)
class Overlaps:
    """Solution of the fixed point: M = m^T theta, Q = |theta|^2, gamma (resolvent trace / n)."""

    M: float
    Q: float
    gamma: float

    def test_error(self) -> float:
        """P(y theta^T x < 0) for a fresh point."""
        return float(norm.cdf(-self.M / np.sqrt(self.Q)))


def residuals(M: float, Q: float, gamma: float, loss: str, alpha: float, lam: float, s2: float) -> np.ndarray:
    """Left minus right sides of the three equations (zero at the solution)."""
    omega = M + np.sqrt(Q) * NODES
    r = losses.prox(loss, omega, gamma)
    g = (omega - r) / gamma
    dprox = 1.0 / (1.0 + gamma * losses.second_derivative(loss, r))
    e = lambda f: float(WEIGHTS @ f)  # noqa: E731
    return np.array(
        [
            alpha * gamma * lam + alpha * e(1.0 - dprox) - 1.0,
            lam * M + s2 * e(g) + M * e((1.0 - dprox) / gamma),
            lam * Q + e(g * r),
        ]
    )


def _square_loss_start(alpha: float, lam: float, s2: float) -> tuple[float, float, float]:
    """Closed-form gamma and M of the square loss, used as the starting point for every loss."""
    # alpha gamma lam (1 + gamma) + alpha gamma = 1 + gamma
    a, b, c = alpha * lam, alpha * lam + alpha - 1.0, -1.0
    gamma = (-b + np.sqrt(b * b - 4 * a * c)) / (2 * a)
    M = s2 / (s2 + 1.0 + lam * (1.0 + gamma))
    return M, max(M * M / s2 + 0.5, 1e-3), gamma


def solve(loss: str, alpha: float, lam: float, s2: float) -> Overlaps:
    """Solve the three equations with scipy (log-parametrised Q and gamma keep them positive)."""
    M0, Q0, g0 = _square_loss_start(alpha, lam, s2)

    def f(v: np.ndarray) -> np.ndarray:
        return residuals(v[0], np.exp(v[1]), np.exp(v[2]), loss, alpha, lam, s2)

    sol = root(f, np.array([M0, np.log(Q0), np.log(g0)]), method="hybr", options={"xtol": 1e-12})
    if not sol.success or np.max(np.abs(f(sol.x))) > 1e-8:
        raise RuntimeError(f"fixed point did not converge for {loss}, alpha={alpha}: {sol.message}")
    return Overlaps(float(sol.x[0]), float(np.exp(sol.x[1])), float(np.exp(sol.x[2])))
