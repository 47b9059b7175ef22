"""Equality-constraint manifolds M = {x : h(x) = 0}: constraints, Jacobians, normal bases, projection.

Each manifold is known to the code by name (the data files store the name): the unit sphere S^2 in R^3
(h = |x|^2 - 1), the flat torus T^2 in R^4 of a pair of angles (h = (x1^2 + x2^2 - 1, x3^2 + x4^2 - 1)),
and a 2-D graph manifold in R^8 with six constraints h_k(x) = x_{k+2} - f_k(x_1, x_2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Coefficients of the graph manifold's six smooth functions f_k(u, v) = a_k sin(b_k u + c_k v) + d_k u v.
GRAPH_A = np.array([0.8, 0.5, 0.6, 0.4, 0.7, 0.3])
GRAPH_B = np.array([1.0, 0.5, 2.0, 1.5, 0.3, 1.2])
GRAPH_C = np.array([0.3, 1.5, 0.4, 1.0, 2.0, 0.7])
GRAPH_D = np.array([0.2, -0.3, 0.1, 0.25, -0.15, 0.3])


@dataclass(frozen=True)
class Manifold:
    name: str
    d: int  # ambient dimension
    m: int  # manifold dimension

    def h(self, x: np.ndarray) -> np.ndarray:
        """Constraint values (n, d - m)."""
        if self.name == "sphere":
            return np.sum(x**2, -1, keepdims=True) - 1.0
        if self.name == "torus":
            return np.stack([x[:, 0] ** 2 + x[:, 1] ** 2 - 1.0, x[:, 2] ** 2 + x[:, 3] ** 2 - 1.0], -1)
        u, v = x[:, :1], x[:, 1:2]
        return x[:, 2:] - (GRAPH_A * np.sin(GRAPH_B * u + GRAPH_C * v) + GRAPH_D * u * v)

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """dh/dx, (n, d - m, d), in closed form."""
        n = len(x)
        if self.name == "sphere":
            return 2.0 * x[:, None, :]
        if self.name == "torus":
            jac = np.zeros((n, 2, 4))
            jac[:, 0, :2], jac[:, 1, 2:] = 2.0 * x[:, :2], 2.0 * x[:, 2:]
            return jac
        u, v = x[:, :1], x[:, 1:2]
        cos = np.cos(GRAPH_B * u + GRAPH_C * v)
        jac = np.zeros((n, 6, 8))
        jac[:, :, 0] = -(GRAPH_A * GRAPH_B * cos + GRAPH_D * v)
        jac[:, :, 1] = -(GRAPH_A * GRAPH_C * cos + GRAPH_D * u)
        jac[:, :, 2:] = np.eye(6)
        return jac

    def normal_basis(self, x: np.ndarray) -> np.ndarray:
        """Orthonormal basis (n, d, d - m) of the normal space: QR of J(x)^T, one point at a time (batched)."""
        q, _ = np.linalg.qr(np.swapaxes(self.jacobian(x), -1, -2))
        return q

    def tangent_projector(self, x: np.ndarray) -> np.ndarray:
        """I - N N^T, (n, d, d)."""
        basis = self.normal_basis(x)
        return np.eye(self.d) - basis @ np.swapaxes(basis, -1, -2)

    def project(self, x: np.ndarray, steps: int = 1) -> np.ndarray:
        """Gauss-Newton steps x <- x - J^T (J J^T)^-1 h(x) towards M."""
        x = np.array(x, dtype=np.float64)
        for _ in range(steps):
            jac = self.jacobian(x)
            gram = jac @ np.swapaxes(jac, -1, -2)
            x = x - np.einsum("nkd,nk->nd", jac, np.linalg.solve(gram, self.h(x)[..., None])[..., 0])
        return x

    def perturb(
        self, z: np.ndarray, kind: str, sigma: float, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """(x_tilde, eps): ``normal`` adds N(z) eps with eps ~ N(0, sigma^2 I_{d-m}); ``isotropic`` adds sigma
        N(0, I_d); ``tangent`` the same in the tangent space (a control); ``raw`` adds nothing."""
        if kind == "raw":
            return z.copy(), np.zeros((len(z), 0))
        if kind == "isotropic":
            eps = sigma * rng.standard_normal(z.shape)
            return z + eps, eps
        basis = self.normal_basis(z)
        if kind == "normal":
            eps = sigma * rng.standard_normal((len(z), self.d - self.m))
            return z + np.einsum("ndk,nk->nd", basis, eps), eps
        if kind == "tangent":
            eps = sigma * rng.standard_normal(z.shape)
            return z + np.einsum("nde,ne->nd", self.tangent_projector(z), eps), eps
        raise ValueError(f"unknown perturbation {kind!r}: expected raw, isotropic, normal or tangent")


MANIFOLDS = {"sphere": Manifold("sphere", 3, 2), "torus": Manifold("torus", 4, 2), "graph": Manifold("graph", 8, 2)}


def manifold(name: str) -> Manifold:
    if name not in MANIFOLDS:
        raise ValueError(f"unknown manifold {name!r}: expected one of {sorted(MANIFOLDS)}")
    return MANIFOLDS[name]


def sphere_points(latitude_deg: np.ndarray, longitude_deg: np.ndarray) -> np.ndarray:
    lat, lon = np.radians(latitude_deg), np.radians(longitude_deg)
    return np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], -1)


def torus_points(phi: np.ndarray, psi: np.ndarray) -> np.ndarray:
    return np.stack([np.cos(phi), np.sin(phi), np.cos(psi), np.sin(psi)], -1)


def graph_points(uv: np.ndarray) -> np.ndarray:
    u, v = uv[:, :1], uv[:, 1:2]
    return np.concatenate([uv, GRAPH_A * np.sin(GRAPH_B * u + GRAPH_C * v) + GRAPH_D * u * v], -1)
