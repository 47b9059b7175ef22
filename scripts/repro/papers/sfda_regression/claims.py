"""DDG-SFDA's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, learning_check, seed_interval, skill_of

STAND_IN = (
    "Claim transfer (embedded default, a stand-in: the rotation angle of sklearn digits, clean source -> target "
    "with Gaussian noise; paper scale: dSprites scale, color -> noisy)"
)
LEARNED = {
    "source_only": "the source model (no adaptation)",
    "self_training": "naive pseudo-labelling (EMA teacher)",
    "feature_alignment": "source-free feature-statistics alignment",
    "tasfar": "the TASFAR-style density-map pseudo-labelling",
    "ddg": "DDG-SFDA",
    "ddg_no_aux": "DDG-SFDA without the auxiliary head",
    "ddg_no_weight": "DDG-SFDA without entropy weighting",
}


def learn(method: str) -> str:
    return f"learn_{method}"


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
    *[
        learning_check(
            learn(method),
            f"{name} (claim transfer)",
            "the mean of the source labels",
            skill_of(method),
            error="absolute error on the target test images (target units, mean over seeds)",
        )
        for method, name in LEARNED.items()
    ],
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
        rests_on=(learn("ddg"), learn("source_only")),
    ),
    ClaimSpec(
        "sfda_not_worse_than_self_training",
        "paper",
        f"{STAND_IN}: DDG-SFDA's target MAE minus naive pseudo-labelling's (EMA teacher), paired, <= 0",
        Test("<=", 0.0),
        _paired("ddg", "self_training"),
        reported="beats_baselines",
        rests_on=(learn("ddg"), learn("self_training")),
    ),
    ClaimSpec(
        "sfda_beats_feature_alignment",
        "paper",
        f"{STAND_IN}: DDG-SFDA's target MAE minus source-free feature-statistics alignment's, paired, < 0",
        Test("<", 0.0),
        _paired("ddg", "feature_alignment"),
        reported="beats_baselines",
        rests_on=(learn("ddg"), learn("feature_alignment")),
    ),
    ClaimSpec(
        "sfda_aux_head_compacts_features",
        "paper",
        f"{STAND_IN}: target-feature compactness ratio with the auxiliary head minus without, paired, < 0",
        Test("<", 0.0),
        _paired("ddg", "ddg_no_aux", "compactness"),
        reported="compact_features",
        rests_on=(learn("ddg"), learn("ddg_no_aux")),
    ),
    ClaimSpec(
        "sfda_beats_tasfar",
        "paper",
        f"{STAND_IN}: DDG-SFDA's target MAE minus the TASFAR-style baseline's (label density map from confident "
        "predictions, fixed pseudo-labels), paired over seeds, < 0",
        Test("<", 0.0),
        _paired("ddg", "tasfar"),
        reported="beats_baselines",
        rests_on=(learn("ddg"), learn("tasfar")),
    ),
    ClaimSpec(
        "sfda_entropy_weighting_helps",
        "paper",
        f"{STAND_IN}, the paper's ablation: DDG-SFDA's target MAE minus that without the entropy weighting of the "
        "pseudo-labels (every sample weighted alike), paired over seeds, < 0",
        Test("<", 0.0),
        _paired("ddg", "ddg_no_weight"),
        rests_on=(learn("ddg"), learn("ddg_no_weight")),
    ),
    ClaimSpec(
        "sfda_aux_head_helps",
        "paper",
        f"{STAND_IN}, the paper's ablation: DDG-SFDA's target MAE minus that without the auxiliary discretized-"
        "distribution head, paired over seeds, < 0",
        Test("<", 0.0),
        _paired("ddg", "ddg_no_aux"),
        rests_on=(learn("ddg"), learn("ddg_no_aux")),
    ),
]
