"""Noise-correlation gradient estimates: isotropic (VNC), restricted to the neural manifold (NMNC), or to a
random subspace of the same dimension (the control), and the manifold/Jacobian measurements.

The estimator perturbs a layer's activity x_l with xi, reads the change of the loss further up and
correlates the two: with xi ~ N(0, s^2 I) the average of dL * xi / s^2 estimates grad_{x_l} L (VNC); with
xi = U z, z ~ N(0, s^2 I_k) and U an orthonormal basis of the top-k principal directions of the layer's
natural activity, U times the average of dL * z / s^2 estimates U U^T grad L (NMNC). Antithetic pairs
(+xi, -xi) give central differences; each perturbation costs one forward pass from layer l upward.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

LossAbove = Callable[[torch.Tensor], torch.Tensor]


def estimate_activity_gradient(
    loss_above: LossAbove, x: torch.Tensor, n_perturb: int, sigma: float, basis: torch.Tensor | None = None
) -> torch.Tensor:
    """Noise-correlation estimate of d loss_i / d x_i for every sample i of ``x`` (B, n).

    ``loss_above`` maps activity (M, n) to per-sample losses (M,), where row m belongs to sample m mod B.
    ``n_perturb`` forward passes per sample (an even number: n_perturb / 2 antithetic pairs); ``basis`` (n, k)
    orthonormal restricts the perturbations to its span (None: isotropic). Draws from torch's global RNG.
    """
    if n_perturb < 2 or n_perturb % 2:
        raise ValueError(f"n_perturb must be an even number >= 2 (antithetic pairs), got {n_perturb}")
    pairs, (b, n) = n_perturb // 2, x.shape
    dim = n if basis is None else basis.shape[1]
    z = torch.randn(pairs, b, dim, dtype=x.dtype, device=x.device) * sigma
    xi = z if basis is None else z @ basis.T
    with torch.no_grad():
        plus = loss_above((x.unsqueeze(0) + xi).reshape(-1, n)).reshape(pairs, b)
        minus = loss_above((x.unsqueeze(0) - xi).reshape(-1, n)).reshape(pairs, b)
    delta = (plus - minus) / 2.0
    coef = (delta.unsqueeze(-1) * z).sum(0) / (pairs * sigma**2)
    return coef if basis is None else coef @ basis.T


def top_components(cov: torch.Tensor, k: int) -> torch.Tensor:
    """Orthonormal (n, k) basis of the k leading eigenvectors of a covariance (float64 eigendecomposition)."""
    values, vectors = torch.linalg.eigh(cov.double())
    order = torch.argsort(values, descending=True)[:k]
    return vectors[:, order].to(cov.dtype)


def random_basis(n: int, k: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """k random orthonormal directions in R^n (QR of a Gaussian matrix; torch's global RNG)."""
    q, r = torch.linalg.qr(torch.randn(n, k, dtype=torch.float64))
    return (q * torch.sign(torch.diagonal(r))).to(dtype)


def covariance(x: np.ndarray) -> np.ndarray:
    """Sample covariance of activity (N, n), float64."""
    x = np.asarray(x, dtype=np.float64)
    x = x - x.mean(axis=0)
    return x.T @ x / max(len(x) - 1, 1)


def participation_ratio(x: np.ndarray) -> float:
    """(sum lambda)^2 / sum lambda^2 of the activity covariance: the effective number of dimensions."""
    values = np.clip(np.linalg.eigvalsh(covariance(x)), 0.0, None)
    return float(values.sum() ** 2 / np.sum(values**2)) if np.sum(values**2) > 0 else float("nan")


def pca_basis(x: np.ndarray, k: int) -> np.ndarray:
    """Top-k principal directions (n, k) of activity (N, n)."""
    values, vectors = np.linalg.eigh(covariance(x))
    return vectors[:, np.argsort(values)[::-1][:k]]


def captured_energy(jac: np.ndarray, basis: np.ndarray) -> float:
    """rho_k = sum_i ||J_i U||_F^2 / sum_i ||J_i||_F^2 for Jacobians J (N, outputs, n) and basis U (n, k);
    a random k-dimensional subspace gives k / n in expectation."""
    jac = np.asarray(jac, dtype=np.float64)
    total = np.sum(jac**2)
    return float(np.sum((jac @ basis) ** 2) / total) if total > 0 else float("nan")


def principal_cosines(jac: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Cosines of the principal angles between the top-k row space of the stacked Jacobians and span(U)."""
    rows = np.asarray(jac, dtype=np.float64).reshape(-1, jac.shape[-1])
    k = basis.shape[1]
    _, _, vt = np.linalg.svd(rows, full_matrices=False)
    return np.clip(np.linalg.svd(vt[:k] @ basis, compute_uv=False), 0.0, 1.0)


def cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Row-wise cosine similarity (0 where either row is zero)."""
    num = (a * b).sum(-1)
    den = a.norm(dim=-1) * b.norm(dim=-1)
    return torch.where(den > 0, num / den.clamp_min(1e-30), torch.zeros_like(num))


def twonn_dimension(x: np.ndarray, max_points: int = 2000, seed: int = 0) -> float:
    """TwoNN intrinsic dimension (Facco et al. 2017): maximum-likelihood d from the ratio of the second to
    the first nearest-neighbour distance, mu, as d = N / sum log mu (duplicates dropped)."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) > max_points:
        x = x[np.random.default_rng(seed).choice(len(x), max_points, replace=False)]
    sq = np.sum(x**2, axis=1)
    dist = np.sqrt(np.clip(sq[:, None] + sq[None, :] - 2 * x @ x.T, 0.0, None))
    np.fill_diagonal(dist, np.inf)
    nearest = np.sort(dist, axis=1)[:, :2]
    keep = nearest[:, 0] > 1e-12
    mu = nearest[keep, 1] / nearest[keep, 0]
    return float(keep.sum() / np.sum(np.log(mu))) if keep.any() else float("nan")
