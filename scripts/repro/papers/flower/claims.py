"""Flower's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, seed_interval

SLOPE_LIMIT = 1.2
COSINE_THRESHOLD = 0.5
"""The brief's threshold (its own choice, tagged [R]) for the best head's displacement-velocity cosine."""


def margin_over(m: Mapping[str, Any], task: str, baseline: str) -> Measured:
    """Baseline's next-step VRMSE minus Flower's, per seed (positive: Flower better), t interval over seeds."""
    runs = m["vrmse_next_step"][task]
    seeds = sorted(runs["flower"])
    out = seed_interval([runs[baseline][s] - runs["flower"][s] for s in seeds])
    out.details |= {
        "flower": float(np.mean([runs["flower"][s] for s in seeds])),
        baseline: float(np.mean([runs[baseline][s] for s in seeds])),
    }
    return out


def best_of_baselines_ratio(m: Mapping[str, Any], task: str) -> Measured:
    """Flower's next-step VRMSE / the best baseline's (single seed): <= 1 means Flower is best."""
    runs = {model: float(np.mean(list(per_seed.values()))) for model, per_seed in m["vrmse_next_step"][task].items()}
    best = np.min([v for k, v in runs.items() if k != "flower"])
    return Measured(runs["flower"] / best, details=runs)


def best_cosine(m: Mapping[str, Any]) -> Measured:
    per_seed = [float(np.max(c)) for c in m["displacement_cosines"].values()]
    return seed_interval(per_seed) if len(per_seed) > 1 else Measured(per_seed[0] if per_seed else None)


CLAIMS = [
    ClaimSpec(
        "flower_warp_identity",
        "check",
        "SelfWarp with zero displacement and identity value and mixing projections is the identity (max |diff| "
        "<= 1e-6), by construction",
        Test("<=", 1e-6),
        lambda m: m["checks"]["identity_max_abs_diff"],
        reported="warp_mechanism",
    ),
    ClaimSpec(
        "flower_warp_integer_roll",
        "check",
        "A constant integer displacement equals a periodic roll (max |diff| <= 1e-6), by construction",
        Test("<=", 1e-6),
        lambda m: m["checks"]["integer_roll_max_abs_diff"],
        reported="warp_mechanism",
    ),
    ClaimSpec(
        "flower_linear_cost",
        "paper",
        "Linear cost: SelfWarp forward time against the number of grid points (32^2 to 256^2) has log-log slope <= 1.2",
        Test("<=", SLOPE_LIMIT),
        lambda m: m["forward_time_slope"],
        reported="linear_cost",
    ),
    ClaimSpec(
        "flower_beats_fno_advection",
        "paper",
        "Flower-lite beats FNO-lite at matched parameters on next-step advection (32x32, 3 seeds): FNO's VRMSE "
        "minus Flower's > 0 over the whole t interval",
        Test(">", 0.0),
        lambda m: margin_over(m, "advection", "fno"),
        reported="n_datasets_best_next_step",
    ),
    ClaimSpec(
        "flower_beats_unet_advection",
        "paper",
        "Flower-lite beats U-Net-lite (the convolutional baseline, a plain U-Net standing in for CNUnet) on "
        "next-step advection (3 seeds): U-Net's VRMSE minus Flower's > 0 over the whole t interval",
        Test(">", 0.0),
        lambda m: margin_over(m, "advection", "unet"),
        reported="n_datasets_best_next_step",
    ),
    ClaimSpec(
        "flower_best_on_waves",
        "paper",
        "Acoustic waves with variable sound speed (one seed): Flower-lite's next-step VRMSE / the best baseline's <= 1",
        Test("<=", 1.0),
        lambda m: best_of_baselines_ratio(m, "wave"),
        reported="n_datasets_best_next_step",
    ),
    ClaimSpec(
        "flower_best_on_burgers",
        "paper",
        "1-D Burgers (neuraloperator's trajectories, one seed): Flower-lite's next-step VRMSE / the best "
        "baseline's <= 1",
        Test("<=", 1.0),
        lambda m: best_of_baselines_ratio(m, "burgers"),
        reported="n_datasets_best_next_step",
    ),
    ClaimSpec(
        "flower_displacement_follows_velocity",
        "paper",
        "Interpretability on advection: the best first-layer head's displacement field has cosine > 0.5 with "
        "-velocity * dt (3 seeds, whole t interval)",
        Test(">", COSINE_THRESHOLD),
        best_cosine,
        reported="warp_interpretation",
    ),
]
