"""Seeded data models: the designs on which the test projection is studied.

Each generator returns features ``X`` (n, p) and labels ``y`` in {-1, +1}; one call draws one training or
test set, so independent training sets are independent calls with independent generators.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DESIGNS = ("mixture", "iid_t", "relu_features", "localized")


@dataclass(frozen=True)
class DesignParams:
    """Fixed (seeded) parameters of one design at dimension p, shared by all its training and test sets."""

    name: str
    p: int
    mean: np.ndarray | None = None
    teacher: np.ndarray | None = None
    spike: np.ndarray | None = None
    weights: np.ndarray | None = None
    label_noise: float = 0.0
    spike_strength: float = 0.0
    t_dof: float = 5.0


def make_params(name: str, p: int, rng: np.random.Generator, settings: dict) -> DesignParams:
    """Draw the fixed parts of a design (class mean, teacher, spike, random-feature weights)."""
    noise = float(settings["label_noise"])
    if name == "mixture":
        direction = rng.standard_normal(p)
        return DesignParams(name, p, mean=settings["mixture_norm"] * direction / np.linalg.norm(direction))
    if name == "iid_t":
        teacher, spike = rng.standard_normal(p), rng.standard_normal(p)
        return DesignParams(
            name,
            p,
            teacher=teacher / np.linalg.norm(teacher),
            spike=spike / np.linalg.norm(spike),
            label_noise=noise,
            spike_strength=float(settings["spike_strength"]),
            t_dof=float(settings["t_dof"]),
        )
    if name == "relu_features":
        d = p // 2
        teacher = rng.standard_normal(d)
        return DesignParams(
            name,
            p,
            teacher=teacher / np.linalg.norm(teacher),
            weights=rng.standard_normal((p, d)) / np.sqrt(d),
            label_noise=noise,
        )
    if name == "localized":
        teacher = np.zeros(p)
        teacher[0] = 1.0
        return DesignParams(name, p, teacher=teacher, label_noise=noise)
    raise ValueError(f"unknown design {name!r}; expected one of {DESIGNS}")


def standard_t(rng: np.random.Generator, dof: float, size) -> np.ndarray:
    """Student-t draws scaled to unit variance (dof > 2)."""
    return rng.standard_t(dof, size) / np.sqrt(dof / (dof - 2.0))


def _flip(y: np.ndarray, rate: float, rng: np.random.Generator) -> np.ndarray:
    return np.where(rng.random(y.shape) < rate, -y, y)


def sample(params: DesignParams, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw n points (X, y) of the design.

    - mixture: x = y m + z, z ~ N(0, I): two Gaussian clusters, so m^T x is bimodal;
    - iid_t: unit-variance Student-t entries with a rank-one spike in the covariance, linear teacher;
    - relu_features: x = ReLU(W g) with g ~ N(0, I_{p/2}), teacher on g;
    - localized: x_1 uniform (bounded), the rest Gaussian, teacher on x_1 alone, so the estimator's mean sits
      on a non-Gaussian coordinate and no central limit smooths mu^T x.
    """
    p = params.p
    if params.name == "mixture":
        y = rng.choice(np.array([-1.0, 1.0]), size=n)
        return y[:, None] * params.mean[None, :] + rng.standard_normal((n, p)), y
    if params.name == "iid_t":
        xi = standard_t(rng, params.t_dof, (n, p))
        gain = np.sqrt(1.0 + params.spike_strength) - 1.0
        x = xi + gain * (xi @ params.spike)[:, None] * params.spike[None, :]
        y = _flip(np.sign(x @ params.teacher + 1e-12), params.label_noise, rng)
        return x, y
    if params.name == "relu_features":
        g = rng.standard_normal((n, params.weights.shape[1]))
        y = _flip(np.sign(g @ params.teacher + 1e-12), params.label_noise, rng)
        return np.maximum(g @ params.weights.T, 0.0), y
    if params.name == "localized":
        x = rng.standard_normal((n, p))
        x[:, 0] = rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), n)
        y = _flip(np.sign(x @ params.teacher + 1e-12), params.label_noise, rng)
        return x, y
    raise ValueError(f"unknown design {params.name!r}")


def fixed_design_ridge(n: int, p: int, sigma: float, reps: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A fixed design X with teacher theta* and ``reps`` independent Gaussian label-noise draws (ridge check)."""
    X = rng.standard_normal((n, p))
    theta_star = rng.standard_normal(p) / np.sqrt(p)
    noise = sigma * rng.standard_normal((reps, n))
    return {"X": X, "theta_star": theta_star, "Y": X @ theta_star + noise}
