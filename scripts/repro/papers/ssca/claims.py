"""SSCA's claims as functions of the evaluate stage's metrics (see repro.reporting.claims). The method is a
reconstruction (the paper was not located); each statement names its small-scale stand-in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, binomial_interval, seed_interval

MISS_TARGET = 0.2  # reconstructed design target of the gate at its design drift (docs/papers/ssca.md)


def _paired(m: Mapping[str, Any], key: str, better: str, worse: str, sign: float = 1.0) -> Measured:
    """Mean over seeds of sign * (better - worse) for the per-seed series m[key][...]."""
    a, b = np.asarray(m[key][better], dtype=float), np.asarray(m[key][worse], dtype=float)
    return seed_interval(sign * (a - b))


def _alpha_outside(m: Mapping[str, Any]) -> Measured:
    """Distance of the calibration target alpha from the false-alarm rate's Clopper-Pearson interval."""
    g = m["gate_design"]
    rate = binomial_interval(g["false_alarms"], g["n"])
    low, high = rate.interval.low, rate.interval.high
    gap = float(np.max([0.0, low - g["alpha"], g["alpha"] - high])) if np.isfinite(low + high) else float("nan")
    return Measured(gap, None, {"false_alarm_rate": rate.value, "interval": [low, high], "alpha": g["alpha"]})


def _miss(m: Mapping[str, Any]) -> Measured:
    g = m["gate_design"]
    rate = binomial_interval(g["misses"], g["n"])
    rate.details = {"drift": g["drift"], "alpha": g["alpha"]}
    return rate


CLAIMS = [
    ClaimSpec(
        "ssca_gaussianized_marginals",
        "check",
        "Hard-rank Gaussianized mfeat coordinates (columns with <= 5% tied values) have |mean| and |variance - 1| "
        "below 0.01 (largest over coordinates and views)",
        Test("<", 0.01),
        lambda m: np.max([m["invariance"]["max_abs_mean"], m["invariance"]["max_abs_var_minus_1"]]),
    ),
    ClaimSpec(
        "ssca_monotone_invariance",
        "check",
        "Hard-rank Gaussianization is unchanged by the strictly increasing warps: largest |g(warped) - g(clean)| "
        "<= 1e-12",
        Test("<=", 1e-12),
        lambda m: m["invariance"]["max_abs_warp_difference"],
    ),
    ClaimSpec(
        "ssca_davis_kahan_holds",
        "check",
        "Davis-Kahan: observed sin Theta / (2 ||M_hat - M|| / eigengap) <= 1 for every computed perturbation "
        "(mfeat seed splits for SSCA and its ablation, nutrimouse bootstraps)",
        Test("<=", 1.0),
        lambda m: np.max(m["davis_kahan_ratios"]),
    ),
    ClaimSpec(
        "ssca_hub_cycles_close",
        "check",
        "Couplings through the hub compose around every 3-cycle of views: share of points not returned home = 0",
        Test("<=", 0.0),
        lambda m: np.max(m["hub_cycle_error"]),
    ),
    ClaimSpec(
        "ssca_gaussianization_stabilises_subspace",
        "paper",
        "Under strong monotone warps of the mfeat views, Gaussianization lowers the seed-to-seed instability of "
        "the learned shared subspace: sin Theta(seed split, all data) of the ablation without Gaussianization "
        "minus SSCA's, mean over seeds with t interval > 0",
        Test(">", 0.0),
        lambda m: _paired(m, "sin_theta", "no_gaussianization", "ssca"),
    ),
    ClaimSpec(
        "ssca_recall_beats_infonce",
        "paper",
        "Cross-view retrieval on warped mfeat (Fourier vs Karhunen-Loeve views, linear projectors as the small-"
        "scale stand-in for MLPs): SSCA Recall@1 (both directions) minus plain InfoNCE's, seed t interval > 0",
        Test(">", 0.0),
        lambda m: _paired(m, "recall_at_1", "ssca", "infonce"),
    ),
    ClaimSpec(
        "ssca_gate_false_alarm_at_target",
        "paper",
        "The conformally calibrated reliability gate's false-alarm rate on clean held-out batches matches its "
        "target alpha: distance of alpha from the Clopper-Pearson 95% interval of the rate = 0",
        Test("<=", 0.0),
        _alpha_outside,
    ),
    ClaimSpec(
        "ssca_gate_miss_rate",
        "paper",
        f"At the design drift (a location shift of one view, reconstructed) the gate misses at most {MISS_TARGET} "
        "of drifted batches: Clopper-Pearson 95% upper end of the miss rate",
        Test("<=", MISS_TARGET),
        _miss,
    ),
]
