"""Flower's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

Errors are per test trajectory (``metrics["per_sample"]``: VRMSE averaged over steps, channels and seeds), so a
comparison of two models is paired over trajectories with a percentile bootstrap interval. Every trained model
a claim compares has a learning check: its next-step VRMSE at least 20 % below persistence's (no change, the
trivial next-step predictor) on the same test trajectories.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import (
    ClaimSpec,
    Interval,
    Measured,
    Test,
    bootstrap_interval,
    deviation_from_reported,
    learning_check,
    skill_over_trivial,
)

SLOPE_LIMIT = 1.2
COSINE_THRESHOLD = 0.5
"""The brief's threshold (its own choice, tagged [R]) for the best head's displacement-velocity cosine."""
FULL_TOLERANCE = 0.2
"""The brief's full-scale tolerance: VRMSE within +-20 % of the project page's value."""
TASKS = ("advection", "wave", "burgers")
MODELS = ("flower", "fno", "unet")
BASELINES = ("fno", "unet")
# reported.yaml key -> (task, kind) at paper scale: the advection task reads shear_flow, the wave task the maze
FULL_SCALE = {
    "vrmse_next_step_shear_flow": ("advection", "next"),
    "vrmse_rollout_1to20_shear_flow": ("advection", "rollout"),
    "vrmse_next_step_acoustic_scattering_maze": ("wave", "next"),
    "vrmse_rollout_1to20_acoustic_scattering_maze": ("wave", "rollout"),
}


def errors(m: Mapping[str, Any], task: str, model: str, kind: str = "next") -> np.ndarray:
    return np.asarray(m["per_sample"][kind][task][model], dtype=float)


def learned(task: str, model: str) -> ClaimSpec:
    def measure(m: Mapping[str, Any]) -> Measured:
        return skill_over_trivial(errors(m, task, model), errors(m, task, "persistence"))

    return learning_check(
        f"learn_{task}_{model}", f"{model} on {task}", "persistence", measure, error="next-step VRMSE"
    )


def rests(task: str, *models: str) -> tuple[str, ...]:
    return tuple(f"learn_{task}_{m}" for m in models)


def margin_over(m: Mapping[str, Any], task: str, baseline: str) -> Measured:
    """Baseline's next-step VRMSE minus Flower's (positive: Flower better), paired bootstrap over trajectories."""
    ours, theirs = errors(m, task, "flower"), errors(m, task, baseline)
    out = bootstrap_interval((theirs, ours), lambda a, b: np.mean(a - b), paired=True)
    out.details = {"flower": float(np.mean(ours)), baseline: float(np.mean(theirs))}
    return out


def best_of_baselines_ratio(m: Mapping[str, Any], task: str, kind: str = "next") -> Measured:
    """Flower's mean VRMSE / the best baseline's (<= 1: Flower is best), paired bootstrap over trajectories."""
    ours = errors(m, task, "flower", kind)
    means = {b: float(np.mean(errors(m, task, b, kind))) for b in BASELINES}
    best = BASELINES[int(np.argmin([means[b] for b in BASELINES]))]
    theirs = errors(m, task, best, kind)
    out = bootstrap_interval((ours, theirs), lambda a, b: np.mean(a) / np.mean(b), paired=True)
    out.details = {"flower": float(np.mean(ours)), **means, "best_baseline": best}
    return out


def best_cosine(m: Mapping[str, Any]) -> Measured:
    """The best first-layer head's cosine with -velocity dt (first seed), bootstrap over test trajectories."""
    run = sorted(m["displacement_cosines"])[0]
    value = float(np.max(m["displacement_cosines"][run]))
    boot = np.asarray(m["displacement_bootstrap"][run], float)
    low, high = np.percentile(boot, [2.5, 97.5])
    return Measured(
        value, Interval(float(low), float(high), "percentile bootstrap 95% over test trajectories", len(boot))
    )


def cost_slope(m: Mapping[str, Any]) -> Measured:
    t = m["forward_time"]
    low, high = np.percentile(t["bootstrap"], [2.5, 97.5])
    return Measured(
        t["slope"], Interval(float(low), float(high), "percentile bootstrap 95% over repeats", len(t["bootstrap"]))
    )


def full_scale(key: str) -> ClaimSpec:
    task, kind = FULL_SCALE[key]
    what = "next-step" if kind == "next" else "1:20 rollout"
    return ClaimSpec(
        f"paper_{key}",
        "paper",
        f"Flower's {what} VRMSE on {key.split('_', 3)[-1]} (the {task} task at paper scale) within "
        f"{FULL_TOLERANCE:.0%} of the project page's value (relative deviation)",
        Test("<=", FULL_TOLERANCE),
        deviation_from_reported(key, lambda m: float(np.mean(errors(m, task, "flower", kind)))),
        reported=key,
        scales=("full",),
        rests_on=rests(task, "flower"),
    )


CLAIMS = [
    *(learned(task, model) for task in TASKS for model in MODELS),
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
        "check",
        "Linear cost, by construction (pointwise maps and one gather per head and point): SelfWarp forward time "
        "against the number of grid points has log-log slope <= 1.2 (fastest of the repeats, bootstrap over repeats)",
        Test("<=", SLOPE_LIMIT),
        cost_slope,
        reported="linear_cost",
        timing=True,
    ),
    ClaimSpec(
        "flower_beats_fno_advection",
        "paper",
        "Flower-lite beats FNO-lite at matched parameters on next-step advection: FNO's VRMSE minus Flower's > 0 "
        "over the whole interval (paired bootstrap over test trajectories)",
        Test(">", 0.0),
        lambda m: margin_over(m, "advection", "fno"),
        reported="n_datasets_best_next_step",
        rests_on=rests("advection", "flower", "fno"),
    ),
    ClaimSpec(
        "flower_beats_unet_advection",
        "paper",
        "Flower-lite beats U-Net-lite (the convolutional baseline, a plain U-Net standing in for CNUnet) on "
        "next-step advection: U-Net's VRMSE minus Flower's > 0 over the whole interval (paired bootstrap)",
        Test(">", 0.0),
        lambda m: margin_over(m, "advection", "unet"),
        reported="n_datasets_best_next_step",
        rests_on=rests("advection", "flower", "unet"),
    ),
    ClaimSpec(
        "flower_best_on_waves",
        "paper",
        "Acoustic waves with variable sound speed: Flower-lite's next-step VRMSE / the best baseline's <= 1 over the "
        "whole interval (paired bootstrap over test trajectories)",
        Test("<=", 1.0),
        lambda m: best_of_baselines_ratio(m, "wave"),
        reported="n_datasets_best_next_step",
        rests_on=rests("wave", *MODELS),
    ),
    ClaimSpec(
        "flower_best_on_burgers",
        "paper",
        "1-D Burgers: Flower-lite's next-step VRMSE / the best baseline's <= 1 over the whole interval (paired "
        "bootstrap over test trajectories)",
        Test("<=", 1.0),
        lambda m: best_of_baselines_ratio(m, "burgers"),
        reported="n_datasets_best_next_step",
        rests_on=rests("burgers", *MODELS),
    ),
    *(
        ClaimSpec(
            f"flower_best_rollout_{task}",
            "paper",
            f"Autoregressive rollout on {task} (VRMSE averaged over the rollout steps from the first frame, as The "
            "Well's 1:20 rollout): Flower-lite's / the best baseline's <= 1 over the whole interval (paired "
            "bootstrap over test trajectories)",
            Test("<=", 1.0),
            lambda m, task=task: best_of_baselines_ratio(m, task, "rollout"),
            reported="n_datasets_best_rollout_1to20",
            rests_on=rests(task, *MODELS),
        )
        for task in TASKS
    ),
    ClaimSpec(
        "flower_displacement_follows_velocity",
        "paper",
        "Interpretability on advection: the best first-layer head's displacement field has cosine > 0.5 with "
        "-velocity * dt / dx (the velocity the data set gives: the simulator's static field, shear_flow's velocity "
        "channels), over the whole interval (bootstrap over test trajectories)",
        Test(">", COSINE_THRESHOLD),
        best_cosine,
        reported="warp_interpretation",
        rests_on=rests("advection", "flower"),
    ),
    *(full_scale(key) for key in FULL_SCALE),
]
