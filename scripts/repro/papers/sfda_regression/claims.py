"""DDG-SFDA's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, seed_interval

STAND_IN = "Digits stand-in (rotation angle of sklearn digits, source clean -> target with Gaussian noise)"


def _paired(a: str, b: str, metric: str = "mae"):
    """Seed-paired difference a - b on the claim transfer, with its t interval."""

    def measure(m: Mapping[str, Any]) -> Measured:
        rows = m["transfers"][m["claim_transfer"]]["methods"]
        return seed_interval(np.asarray(rows[a][metric], dtype=float) - np.asarray(rows[b][metric], dtype=float))

    return measure


def _histogram_error(m: Mapping[str, Any]) -> float:
    c = m["checks"]
    return float(np.max([c["histogram_max_sum_error"], -c["histogram_min_value"]]))


CLAIMS = [
    ClaimSpec(
        "sfda_histograms_are_distributions",
        "check",
        "Every instance histogram is non-negative and sums to 1: max(|sum - 1|, -min entry) <= 1e-5",
        Test("<=", 1e-5),
        _histogram_error,
        reported="density_robust",
    ),
    ClaimSpec(
        "sfda_pseudo_labels_in_bin_range",
        "check",
        "Every refined pseudo-label lies within the bin-centre range [c_1, c_K]: largest violation <= 0",
        Test("<=", 0.0),
        lambda m: m["checks"]["label_max_range_violation"],
        reported="density_robust",
    ),
    ClaimSpec(
        "sfda_same_domain_no_collapse",
        "check",
        "Sanity, target = source domain: DDG-SFDA changes the MAE by less than 10% of source-only's (mean |relative "
        "change| over seeds <= 0.1)",
        Test("<=", 0.1),
        lambda m: float(np.mean(np.abs(np.asarray(m["same_domain_relative_change"], dtype=float)))),
        reported="density_robust",
    ),
    ClaimSpec(
        "sfda_beats_source_only",
        "paper",
        f"{STAND_IN}: DDG-SFDA's target MAE minus source-only's, paired over seeds, < 0 (whole 95% t interval)",
        Test("<", 0.0),
        _paired("ddg", "source_only"),
        reported="beats_baselines",
    ),
    ClaimSpec(
        "sfda_not_worse_than_self_training",
        "paper",
        f"{STAND_IN}: DDG-SFDA's target MAE minus naive pseudo-labelling's (EMA teacher), paired, <= 0",
        Test("<=", 0.0),
        _paired("ddg", "self_training"),
        reported="beats_baselines",
    ),
    ClaimSpec(
        "sfda_beats_feature_alignment",
        "paper",
        f"{STAND_IN}: DDG-SFDA's target MAE minus source-free feature-statistics alignment's, paired, < 0",
        Test("<", 0.0),
        _paired("ddg", "feature_alignment"),
        reported="beats_baselines",
    ),
    ClaimSpec(
        "sfda_aux_head_compacts_features",
        "paper",
        f"{STAND_IN}: target-feature compactness ratio with the auxiliary head minus without, paired, < 0",
        Test("<", 0.0),
        _paired("ddg", "ddg_no_aux", "compactness"),
        reported="compact_features",
    ),
]
