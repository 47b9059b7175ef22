"""GPO's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

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
    learning_check,
    skill_over_trivial,
)

ACCURACY_TOLERANCE = 1.5
"""The brief's smoke test: GPO-lite within 1.5x of FNO-lite (the reviews report FNO <= GPO on NS2D)."""
RESOLUTION_TOLERANCE = 1.3
SLOPE_LIMIT = 1.2


def _ratio_of_means(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(a) / np.mean(b))


def error_ratio(m: Mapping[str, Any], task: str, res: str = "lo", versus: str = "fno") -> Measured:
    """Mean rel-L2 of GPO / of the baseline on the same test samples, with a paired bootstrap interval."""
    errors = m["relative_l2"][task]
    ours, theirs = np.asarray(errors["gpo"][res]), np.asarray(errors[versus][res])
    out = bootstrap_interval((ours, theirs), _ratio_of_means, paired=True)
    out.details = {"gpo": float(np.mean(ours)), versus: float(np.mean(theirs))}
    return out


def resolution_ratio(m: Mapping[str, Any], task: str, model: str = "gpo") -> Measured:
    """Zero-shot: mean rel-L2 on the fine test grid / on the training grid (bootstrap over test samples)."""
    errors = m["relative_l2"][task][model]
    hi, lo = np.asarray(errors["hi"]), np.asarray(errors["lo"])
    out = bootstrap_interval((hi, lo), _ratio_of_means, paired=len(hi) == len(lo))
    out.details = {"grids": m["grids"][task], "hi": float(np.mean(hi)), "lo": float(np.mean(lo))}
    return out


def irregular_ratio(m: Mapping[str, Any], task: str) -> Measured:
    """rel-L2 from a random point subset alone / from the full grid, at the same subset points."""
    errors = m["relative_l2"][task]["gpo"]
    sub, full = np.asarray(errors["irregular"]), np.asarray(errors["full_grid_at_subset"])
    return bootstrap_interval((sub, full), _ratio_of_means, paired=True)


def slope(m: Mapping[str, Any], model: str = "gpo") -> Measured:
    """Slope of the median forward time against N, with the percentile interval of its bootstrap over repeats."""
    t = m["forward_time"][model]
    low, high = np.percentile(t["bootstrap"], [2.5, 97.5])
    return Measured(
        float(t["slope"]),
        Interval(float(low), float(high), "percentile bootstrap 95% over repeats", len(t["bootstrap"])),
        {"reference_slopes": m["forward_time_slope"]},
    )


TRIVIAL = {"darcy": "the training mean field", "ns": "persistence"}


def learned(task: str, model: str) -> ClaimSpec:
    """The model's rel-L2 on the training grid at least 20 % below the trivial predictor's, same test samples."""

    def measure(m: Mapping[str, Any]) -> Measured:
        errors = m["relative_l2"][task]
        return skill_over_trivial(errors[model]["lo"], errors["trivial"]["lo"])

    return learning_check(f"learn_{task}_{model}", f"{model} on {task}", TRIVIAL[task], measure, error="rel-L2")


CLAIMS = [
    *(learned(task, model) for task in ("darcy", "ns") for model in ("gpo", "fno")),
    ClaimSpec(
        "gpo_decoder_resolution_consistent",
        "check",
        "The Gaussian trial basis evaluated on a 2x finer grid equals its coarse-grid evaluation at the shared "
        "points (max |diff| <= 1e-6): the decoder is a function of coordinates only, by construction",
        Test("<=", 1e-6),
        lambda m: np.max([m["checks"][t]["decoder_max_abs_diff"] for t in ("darcy", "ns")]),
        reported="mesh_agnostic",
    ),
    ClaimSpec(
        "gpo_measurement_permutation_invariant",
        "check",
        "The Petrov-Galerkin measurement is invariant to the order of the points (relative max |diff| <= 1e-5, "
        "float round-off)",
        Test("<=", 1e-5),
        lambda m: np.max([m["checks"][t]["measurement_permutation_max_abs_diff"] for t in ("darcy", "ns")]),
        reported="mesh_agnostic",
    ),
    ClaimSpec(
        "gpo_near_linear_forward_time",
        "check",
        "Near-linear complexity in N at a fixed modal budget, by construction (measurement and reconstruction are "
        "O(N G), attention O(G^2)): GPO-lite forward time against the number of points at fixed G has log-log slope "
        "<= 1.2 (fastest of the repeats, bootstrap over repeats; softmax attention over points, the reference, ~2)",
        Test("<=", SLOPE_LIMIT),
        slope,
        reported="near_linear",
        timing=True,
    ),
    ClaimSpec(
        "gpo_competitive_with_fno_ns",
        "paper",
        "Competitive accuracy on Navier-Stokes (FNO protocol, simulated, 32x32 one-step): GPO-lite mean rel-L2 / "
        "FNO-lite's at matched parameters <= 1.5 (whole bootstrap interval)",
        Test("<=", ACCURACY_TOLERANCE),
        lambda m: error_ratio(m, "ns"),
        reported="competitive_accuracy",
        rests_on=("learn_ns_gpo", "learn_ns_fno"),
    ),
    ClaimSpec(
        "gpo_competitive_with_fno_darcy",
        "paper",
        "Competitive accuracy on Darcy flow (neuraloperator's 16x16 samples): GPO-lite mean rel-L2 / FNO-lite's "
        "<= 1.5 (whole bootstrap interval)",
        Test("<=", ACCURACY_TOLERANCE),
        lambda m: error_ratio(m, "darcy"),
        reported="competitive_accuracy",
        rests_on=("learn_darcy_gpo", "learn_darcy_fno"),
    ),
    ClaimSpec(
        "gpo_zero_shot_resolution_ns",
        "paper",
        "Resolution-agnostic: trained on 32x32 Navier-Stokes, GPO-lite's rel-L2 on the same test trajectories "
        "at 64x64 <= 1.3x its 32x32 value",
        Test("<=", RESOLUTION_TOLERANCE),
        lambda m: resolution_ratio(m, "ns"),
        reported="resolution_agnostic",
        rests_on=("learn_ns_gpo",),
    ),
    ClaimSpec(
        "gpo_zero_shot_resolution_darcy",
        "paper",
        "Resolution-agnostic: trained on 16x16 Darcy, GPO-lite's rel-L2 on the 32x32 test set <= 1.3x its 16x16 value",
        Test("<=", RESOLUTION_TOLERANCE),
        lambda m: resolution_ratio(m, "darcy"),
        reported="resolution_agnostic",
        rests_on=("learn_darcy_gpo",),
    ),
    ClaimSpec(
        "gpo_irregular_points_ns",
        "paper",
        "Irregular geometries: from a random 50% subset of the Navier-Stokes points alone, GPO-lite's rel-L2 "
        "at those points <= 1.3x its full-grid value there (tolerance ours; the brief asks to report it)",
        Test("<=", RESOLUTION_TOLERANCE),
        lambda m: irregular_ratio(m, "ns"),
        reported="irregular_geometry",
        rests_on=("learn_ns_gpo",),
    ),
]
