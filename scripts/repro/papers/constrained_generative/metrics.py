"""Distribution distances on the manifold and the exact checks of the perturbation."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist, pdist

from repro.papers.constrained_generative.manifolds import Manifold


def median_bandwidth(reference: np.ndarray) -> float:
    """Median pairwise distance of the reference sample: the MMD bandwidth, fixed across methods."""
    return float(np.median(pdist(reference)))


def mmd2(x: np.ndarray, y: np.ndarray, bandwidth: float) -> float:
    """Unbiased MMD^2 with the Gaussian kernel exp(-|a - b|^2 / (2 bandwidth^2))."""
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return float("nan")
    kxx = np.exp(-cdist(x, x, "sqeuclidean") / (2 * bandwidth**2))
    kyy = np.exp(-cdist(y, y, "sqeuclidean") / (2 * bandwidth**2))
    kxy = np.exp(-cdist(x, y, "sqeuclidean") / (2 * bandwidth**2))
    n, m = len(x), len(y)
    return float(
        (kxx.sum() - np.trace(kxx)) / (n * (n - 1)) + (kyy.sum() - np.trace(kyy)) / (m * (m - 1)) - 2 * kxy.mean()
    )


def directions(d: int, count: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((count, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def sliced_wasserstein(x: np.ndarray, y: np.ndarray, dirs: np.ndarray, p: int = 2) -> float:
    """(mean over directions of W_p^p of the 1-D projections)^(1/p), quantiles on a common grid."""
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return float("nan")
    q = (np.arange(max(len(x), len(y))) + 0.5) / max(len(x), len(y))
    px = np.quantile(x @ dirs.T, q, axis=0, method="inverted_cdf")
    py = np.quantile(y @ dirs.T, q, axis=0, method="inverted_cdf")
    return float(np.mean(np.abs(px - py) ** p) ** (1 / p))


def sliced_w2_per_direction(x: np.ndarray, y: np.ndarray, dirs: np.ndarray) -> np.ndarray:
    """W_2^2 of the 1-D projections of x and y along each direction (their mean is sliced W2 squared); NaN
    per direction when x is not finite."""
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return np.full(len(dirs), np.nan)
    q = (np.arange(max(len(x), len(y))) + 0.5) / max(len(x), len(y))
    px = np.quantile(x @ dirs.T, q, axis=0, method="inverted_cdf")
    py = np.quantile(y @ dirs.T, q, axis=0, method="inverted_cdf")
    return np.mean((px - py) ** 2, axis=0)


def perturbation_checks(geom: Manifold, z: np.ndarray, sigmas: list[float], seed: int) -> dict[str, float]:
    """Zero tangent component and recovery of eps (normal noise); one Gauss-Newton step returns z up to
    O(sigma^2) (fitted log-log slope); |h(x_tilde)| grows linearly in sigma (fitted slope)."""
    z = np.asarray(z, dtype=np.float64)
    rng = np.random.default_rng(seed)
    x, eps = geom.perturb(z, "normal", 0.1, rng)
    tangent = np.einsum("nde,ne->nd", geom.tangent_projector(z), x - z)
    recovered = np.einsum("ndk,nd->nk", geom.normal_basis(z), x - z)
    errors, violations = [], []
    for sigma in sigmas:
        x, _ = geom.perturb(z, "normal", sigma, np.random.default_rng(seed))
        errors.append(np.mean(np.linalg.norm(geom.project(x, 1) - z, axis=1)))
        violations.append(np.mean(np.linalg.norm(geom.h(x), axis=1)))
    logs = np.log(np.asarray(sigmas))
    return {
        "tangent_component_max": float(np.max(np.abs(tangent))),
        "eps_recovery_error_max": float(np.max(np.abs(recovered - eps))),
        "projection_error_slope": float(np.polyfit(logs, np.log(errors), 1)[0]),
        "violation_slope": float(np.polyfit(logs, np.log(violations), 1)[0]),
    }


def divergence_rate(history: np.ndarray, cap: float) -> float:
    """Decrease of the held-out loss per epoch over the second half of training (least-squares slope,
    sign flipped); a run that stopped on a non-finite loss counts as ``cap``."""
    h = np.asarray(history, dtype=float)
    if h.size < 4 or not np.all(np.isfinite(h)):
        return float(cap)
    tail = h[len(h) // 2 :]
    return float(-np.polyfit(np.arange(tail.size), tail, 1)[0])
