"""Two-sided PL test problems, batched: P instances of one family and size evaluated at once.

Every family exposes the gradient, Hessian-vector products (for the Lyapunov correction), its known
saddle point and its constants (block smoothness L_xx, L_yy, cross-smoothness L_xy, PL moduli mu_x,
mu_y, overall smoothness L), each an array over the P instances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class QuadraticGames:
    """f = 1/2 x'Ax + x'By - 1/2 y'Cy + a'x + c'y with A, C positive definite (strongly convex-concave)."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    a: np.ndarray
    c: np.ndarray

    def grad(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        gx = np.einsum("pij,pj->pi", self.A, x) + np.einsum("pij,pj->pi", self.B, y) + self.a
        gy = np.einsum("pji,pj->pi", self.B, x) - np.einsum("pij,pj->pi", self.C, y) + self.c
        return gx, gy

    def hvp(self, x, y, vx, vy) -> tuple[np.ndarray, np.ndarray]:
        """Hessian [[A, B], [B', -C]] times (vx, vy)."""
        return (
            np.einsum("pij,pj->pi", self.A, vx) + np.einsum("pij,pj->pi", self.B, vy),
            np.einsum("pji,pj->pi", self.B, vx) - np.einsum("pij,pj->pi", self.C, vy),
        )

    def saddle(self) -> tuple[np.ndarray, np.ndarray]:
        """Stationary point of the gradient field, by one linear solve of the KKT system."""
        dx = self.A.shape[1]
        top = np.concatenate([self.A, self.B], axis=2)
        bottom = np.concatenate([np.swapaxes(self.B, 1, 2), -self.C], axis=2)
        rhs = -np.concatenate([self.a, self.c], axis=1)[..., None]
        sol = np.linalg.solve(np.concatenate([top, bottom], axis=1), rhs)[..., 0]
        return sol[:, :dx], sol[:, dx:]

    def constants(self) -> dict[str, np.ndarray]:
        eig_a, eig_c = np.linalg.eigvalsh(self.A), np.linalg.eigvalsh(self.C)
        l_xy = np.linalg.norm(self.B, ord=2, axis=(1, 2))
        return {
            "l_xx": eig_a[:, -1],
            "l_yy": eig_c[:, -1],
            "l_xy": l_xy,
            "mu_x": eig_a[:, 0],
            "mu_y": eig_c[:, 0],
            "l": np.maximum(np.maximum(eig_a[:, -1], eig_c[:, -1]), l_xy),
        }


class YangExample:
    """Yang, Kiyavash & He (2020): f = x^2 + 3 sin^2 x sin^2 y - 4 y^2 - 10 sin^2 y, nonconvex-nonconcave,
    two-sided PL, saddle (0, 0). Constants are estimated on a grid by the data stage and passed in."""

    def __init__(self, n: int, constants: dict[str, float]):
        self.n = n
        self._constants = {k: np.full(n, float(v)) for k, v in constants.items()}

    @staticmethod
    def value(x, y):
        return x**2 + 3 * np.sin(x) ** 2 * np.sin(y) ** 2 - 4 * y**2 - 10 * np.sin(y) ** 2

    @staticmethod
    def grad(x, y):
        return (
            2 * x + 3 * np.sin(2 * x) * np.sin(y) ** 2,
            3 * np.sin(x) ** 2 * np.sin(2 * y) - 8 * y - 10 * np.sin(2 * y),
        )

    @staticmethod
    def hessian(x, y):
        """(f_xx, f_xy, f_yy)."""
        return (
            2 + 6 * np.cos(2 * x) * np.sin(y) ** 2,
            3 * np.sin(2 * x) * np.sin(2 * y),
            6 * np.sin(x) ** 2 * np.cos(2 * y) - 8 - 20 * np.cos(2 * y),
        )

    def hvp(self, x, y, vx, vy):
        fxx, fxy, fyy = self.hessian(x, y)
        return fxx * vx + fxy * vy, fxy * vx + fyy * vy

    def saddle(self):
        return np.zeros((self.n, 1)), np.zeros((self.n, 1))

    def constants(self) -> dict[str, np.ndarray]:
        return self._constants


def estimate_yang_constants(extent: float, points: int) -> dict[str, float]:
    """Smoothness and PL moduli of the Yang example on [-extent, extent]^2 (grid search).

    mu_x = min ||f_x||^2 / (2 (f - min_x' f)); mu_y likewise with max_y'; points where the gap is below
    1e-9 are skipped (both sides vanish there).
    """
    grid = np.linspace(-extent, extent, points)
    x, y = np.meshgrid(grid, grid, indexing="ij")
    f = YangExample.value(x, y)
    fx, fy = YangExample.grad(x, y)
    fxx, fxy, fyy = YangExample.hessian(x, y)
    gap_x = f - f.min(axis=0, keepdims=True)
    gap_y = f.max(axis=1, keepdims=True) - f
    mu_x = np.min(fx[gap_x > 1e-9] ** 2 / (2 * gap_x[gap_x > 1e-9]))
    mu_y = np.min(fy[gap_y > 1e-9] ** 2 / (2 * gap_y[gap_y > 1e-9]))
    l_xx, l_yy, l_xy = np.abs(fxx).max(), np.abs(fyy).max(), np.abs(fxy).max()
    return {"l_xx": l_xx, "l_yy": l_yy, "l_xy": l_xy, "mu_x": mu_x, "mu_y": mu_y, "l": max(l_xx, l_yy, l_xy)}


def random_spd(rng: np.random.Generator, d: int, low: float, high: float) -> np.ndarray:
    """Symmetric matrix with eigenvalues spread log-uniformly over [low, high], both ends included."""
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    eig = np.exp(np.linspace(np.log(low), np.log(high), d))
    return (q * eig) @ q.T


def quadratic_game(rng: np.random.Generator, d: int, coupling: float, mu: float, l_block: float) -> dict:
    """One quadratic game with ||B||_2 = coupling exactly and a random saddle."""
    b = rng.normal(size=(d, d))
    return {
        "A": random_spd(rng, d, mu, l_block),
        "C": random_spd(rng, d, mu, l_block),
        "B": coupling * b / np.linalg.norm(b, ord=2),
        "a": rng.normal(size=d),
        "c": rng.normal(size=d),
    }


def robust_least_squares(rng: np.random.Generator, d: int, n_rows: int, lam: float) -> dict:
    """min_x max_y ||Mx - b - y||^2 - lam ||y||^2 (lam > 1: strongly concave in y) as a quadratic game.

    Expanding: A = 2 M'M, B = -2 M', C = 2 (lam - 1) I, a = -2 M'b, c = 2 b (x is d-, y is n_rows-dimensional).
    """
    m = rng.normal(size=(n_rows, d)) / np.sqrt(n_rows)
    b = rng.normal(size=n_rows)
    return {"A": 2 * m.T @ m, "B": -2 * m.T, "C": 2 * (lam - 1) * np.eye(n_rows), "a": -2 * m.T @ b, "c": 2 * b}
