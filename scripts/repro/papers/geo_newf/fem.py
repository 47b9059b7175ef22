"""P1 finite-element quantities on a triangle mesh in numpy: element gradients and areas, the consistent mass
matrix, the residual of the true constitutive law and the mass-weighted relative L2 error.

Shared by the evaluation (errors, conservation of any predicted field under the true law) and the tests,
which check each against scikit-fem's assembly.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse


def p1_geometry(nodes: np.ndarray, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of the three hat functions on every triangle (m, 3, 2) and the areas (m,)."""
    p = nodes[cells]  # (m, 3, 2)
    d1, d2 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
    det = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
    inv = np.stack([np.stack([d2[:, 1], -d2[:, 0]], 1), np.stack([-d1[:, 1], d1[:, 0]], 1)], 1) / det[:, None, None]
    ref = np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]])  # reference gradients
    return np.einsum("ij,mjk->mik", ref, inv), 0.5 * np.abs(det)


def mass_matrix(nodes: np.ndarray, cells: np.ndarray) -> sparse.csr_matrix:
    """Consistent P1 mass matrix: area / 12 * (1 + delta_ab) per triangle."""
    _, area = p1_geometry(nodes, cells)
    local = (np.ones((3, 3)) + np.eye(3))[None] * (area / 12.0)[:, None, None]
    rows = np.repeat(cells, 3, axis=1).ravel()
    cols = np.tile(cells, (1, 3)).ravel()
    n = len(nodes)
    return sparse.coo_matrix((local.ravel(), (rows, cols)), shape=(n, n)).tocsr()


def true_flux(g: np.ndarray, beta: float) -> np.ndarray:
    """q(g) = (1 + beta |g|^2) g, the data's constitutive law."""
    return (1.0 + beta * np.sum(g * g, axis=-1, keepdims=True)) * g


def residual(u: np.ndarray, nodes: np.ndarray, cells: np.ndarray, load: np.ndarray, beta: float) -> np.ndarray:
    """r_a = int q(grad u) . grad phi_a - load_a at every node (the FE balance of node a's cell)."""
    grads, area = p1_geometry(nodes, cells)
    g = np.einsum("ma,mad->md", u[cells], grads)
    local = area[:, None] * np.einsum("md,mad->ma", true_flux(g, beta), grads)
    return np.bincount(cells.ravel(), local.ravel(), minlength=len(nodes)) - load


def relative_l2(u: np.ndarray, ref: np.ndarray, mass: sparse.spmatrix) -> float:
    """||u - ref||_M / ||ref||_M with the consistent mass matrix."""
    e = u - ref
    return float(np.sqrt((e @ (mass @ e)) / (ref @ (mass @ ref))))
