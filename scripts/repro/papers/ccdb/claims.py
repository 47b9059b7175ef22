"""CCDB's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

import numpy as np

from repro.reporting.claims import ClaimSpec, Test, seed_interval


def _at(m: dict, which: str, method: str, key: str) -> np.ndarray:
    return np.asarray(m["ratios"][m[which]][method][key], dtype=float)


def _all_weights(m: dict, key: str) -> np.ndarray:
    values = [v for r in m["ratios"].values() for name, e in r.items() if name == "ccdb" for v in e[f"weights_{key}"]]
    return np.asarray(values, dtype=float) if values else np.array([np.nan])


def _gap_ratio(m: dict) -> np.ndarray:
    oracle, ccdb, erm = (_at(m, "main", k, "unbiased") for k in ("group_balanced", "ccdb", "erm"))
    return (oracle - ccdb) / (oracle - erm)


CLAIMS = [
    ClaimSpec(
        "ccdb_weights_positive",
        "check",
        "CCDB's sample weights are positive (softplus parametrisation): smallest weight over all runs > 0",
        Test(">", 0.0),
        lambda m: np.min(_all_weights(m, "min")),
    ),
    ClaimSpec(
        "ccdb_weights_mean_one",
        "check",
        "CCDB's sample weights have mean 1 (normalised by construction): largest |mean - 1| over runs < 1e-5",
        Test("<", 1e-5),
        lambda m: np.max(np.abs(_all_weights(m, "mean") - 1.0)),
    ),
    ClaimSpec(
        "ccdb_table_recomputed",
        "check",
        "Group accuracies recomputed from the saved test predictions equal the training stage's table "
        "(largest absolute difference)",
        Test("<=", 1e-12),
        lambda m: m["table_deviation"],
    ),
    ClaimSpec(
        "ccdb_no_bias_uniform_weights",
        "paper",
        "Without bias (rho = 0.1, colour independent of the digit) CCDB's weights stay near uniform: standard "
        "deviation of the mean-1 weights < 0.2 (t interval over 3 seeds)",
        Test("<", 0.2),
        lambda m: seed_interval(_at(m, "no_bias", "ccdb", "weights_std")),
    ),
    ClaimSpec(
        "ccdb_no_bias_matches_erm",
        "paper",
        "Without bias (rho = 0.1) CCDB's test accuracy matches ERM's: difference within +-0.02 (t interval over "
        "3 seeds)",
        Test("between", low=-0.02, high=0.02),
        lambda m: seed_interval(_at(m, "no_bias", "ccdb", "average") - _at(m, "no_bias", "erm", "average")),
    ),
    ClaimSpec(
        "ccdb_worst_group_beats_erm",
        "paper",
        "Coloured digits (10 classes x 10 colours, rho = 0.95 in training, the brief's lower ratio: at 0.99 most "
        "of the 90 bias-conflicting groups hold no training image), no bias labels: CCDB's worst-group test "
        "accuracy exceeds ERM's (difference, t interval over 3 seeds)",
        Test(">", 0.0),
        lambda m: seed_interval(_at(m, "main", "ccdb", "worst_group") - _at(m, "main", "erm", "worst_group")),
    ),
    ClaimSpec(
        "ccdb_upweights_conflicting",
        "paper",
        "CCDB gives bias-conflicting training samples a larger mean weight than bias-aligned ones without seeing "
        "bias labels (ratio of mean weights at rho = 0.95, t interval over 3 seeds) > 1",
        Test(">", 1.0),
        lambda m: seed_interval(
            _at(m, "main", "ccdb", "weights_mean_conflicting") / _at(m, "main", "ccdb", "weights_mean_aligned")
        ),
    ),
    ClaimSpec(
        "ccdb_closer_to_oracle",
        "paper",
        "CCDB closes part of ERM's gap to the group-balanced oracle (group labels): unbiased-accuracy gap of CCDB "
        "over ERM's gap at rho = 0.95 < 1 (t interval over 3 seeds)",
        Test("<", 1.0),
        lambda m: seed_interval(_gap_ratio(m)),
    ),
]
