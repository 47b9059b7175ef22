"""SPECIAL's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import (
    ClaimSpec,
    Interval,
    Measured,
    Test,
    learning_check,
    seed_interval,
    skill_over_trivial,
)


def _paired(m: Mapping[str, Any], a: str, b: str, metric: str) -> Measured:
    """Seed-paired difference a - b of a per-seed metric, with its t interval."""
    x = np.asarray(m["methods"][a][metric], dtype=float)
    y = np.asarray(m["methods"][b][metric], dtype=float)
    return seed_interval(x - y)


def _bwt_gain(m: Mapping[str, Any]) -> Measured:
    """SPECIAL's BWT minus FedAvg's, guarded by final accuracy: less forgetting counts only when SPECIAL's
    final average accuracy is not significantly below FedAvg's (t interval of the difference reaching 0);
    otherwise the retention was bought by learning less and the interval is left undefined (fails)."""
    gain = _paired(m, m["main_method"], "fedavg", "bwt")
    final = _paired(m, m["main_method"], "fedavg", "final_accuracy")
    gain.details |= {"final_accuracy_gain": final.value, "final_accuracy_gain_high": final.interval.high}
    if not final.interval.high >= 0:
        gain.details["guard"] = "SPECIAL's final accuracy is significantly below FedAvg's"
        gain.interval = Interval(float("nan"), float("nan"), gain.interval.method, gain.interval.n)
    return gain


def _learned(name: str):
    def measure(m: Mapping[str, Any]) -> Measured:
        key = m["main_method"] if name == "main" else name
        return skill_over_trivial(m["learning"][key], m["learning"]["trivial"])

    return measure


def _mu_extremes(m: Mapping[str, Any]) -> tuple[str, str]:
    names = m["mu_names"]
    return names[int(np.argmax(m["mu_values"]))], names[int(np.argmin(m["mu_values"]))]


def _mu_retention(m: Mapping[str, Any]) -> Measured:
    high, low = _mu_extremes(m)
    return _paired(m, high, low, "bwt")


def _mu_plasticity(m: Mapping[str, Any]) -> Measured:
    high, low = _mu_extremes(m)
    return _paired(m, high, low, "plasticity")


def _sweep_gain(key: str):
    """SPECIAL's BWT at the largest swept value minus at the smallest, paired by seed."""

    def measure(m: Mapping[str, Any]) -> Measured:
        rows = m["sweeps"][key]
        values = np.asarray(rows["values"], dtype=float)
        bwt = np.asarray(rows["special"], dtype=float)
        return seed_interval(bwt[int(np.argmax(values))] - bwt[int(np.argmin(values))])

    return measure


TRIVIAL = "the class prior (most frequent training digit)"
RIGHT_AFTER = "0/1 error on each task's test images right after that task (mean over seeds)"
SWEPT = {"per_round": "participating clients N", "rounds": "rounds per task T", "local_epochs": "local epochs E"}

CLAIMS = [
    learning_check("learn_fedavg", "FedAvg's global model", TRIVIAL, _learned("fedavg"), error=RIGHT_AFTER),
    learning_check("learn_special", "SPECIAL's global model (main mu)", TRIVIAL, _learned("main"), error=RIGHT_AFTER),
    *[
        learning_check(
            f"learn_special_{key}",
            f"SPECIAL's global model at both ends of the sweep over {label} (pooled)",
            TRIVIAL,
            _learned(f"sweep_{key}"),
            error=RIGHT_AFTER,
        )
        for key, label in SWEPT.items()
    ],
    ClaimSpec(
        "special_mu0_is_fedavg",
        "check",
        "SPECIAL with mu = 0 reproduces FedAvg bit for bit under the same seeds: largest |accuracy difference| = 0",
        Test("<=", 0.0),
        lambda m: m["mu0_max_abs_difference_from_fedavg"],
        reported="fedavg_plus_anchor",
    ),
    ClaimSpec(
        "special_server_step_convex",
        "check",
        "Every server step lies on the segment between the client average and the anchor (largest distance from "
        "the segment / segment length <= 1e-5, float32)",
        Test("<=", 1e-5),
        lambda m: m["max_segment_residual"],
        reported="fedavg_plus_anchor",
    ),
    ClaimSpec(
        "special_bwt_above_fedavg",
        "paper",
        "Digits stand-in (5 domains of sklearn digits, 20 clients, Dirichlet 0.3): SPECIAL's backward transfer "
        "minus FedAvg's, paired over seeds, > 0 (whole 95% t interval), provided SPECIAL's final average "
        "accuracy is not significantly below FedAvg's (t interval of the difference reaching 0)",
        Test(">", 0.0),
        _bwt_gain,
        reported="backward_transfer",
        rests_on=("learn_special", "learn_fedavg"),
    ),
    ClaimSpec(
        "special_mu_raises_retention",
        "check",
        "By construction (mu is a server step size: with the previous round's model as anchor, SPECIAL is FedAvg "
        "whose server step is 1 / (1 + mu), so a larger mu moves less per round): BWT at the largest mu minus at "
        "mu = 0, paired over seeds, > 0",
        Test(">", 0.0),
        _mu_retention,
        reported="backward_transfer",
    ),
    ClaimSpec(
        "special_mu_costs_plasticity",
        "check",
        "By construction (the same damped server step learns each new task less): mean accuracy right after each "
        "task at the largest mu minus at mu = 0 < 0",
        Test("<", 0.0),
        _mu_plasticity,
        reported="backward_transfer",
    ),
    ClaimSpec(
        "special_bwt_improves_with_clients",
        "paper",
        "SPECIAL's BWT improves with more participating clients N: BWT(largest N) - BWT(smallest N) > 0",
        Test(">", 0.0),
        _sweep_gain("per_round"),
        reported="bwt_bound",
        rests_on=("learn_special_per_round",),
    ),
    ClaimSpec(
        "special_bwt_improves_with_rounds",
        "paper",
        "SPECIAL's BWT improves with more rounds per task T: BWT(largest T) - BWT(smallest T) > 0",
        Test(">", 0.0),
        _sweep_gain("rounds"),
        reported="bwt_bound",
        rests_on=("learn_special_rounds",),
    ),
    ClaimSpec(
        "special_bwt_improves_with_local_epochs",
        "paper",
        "SPECIAL's BWT improves with more local epochs E: BWT(largest E) - BWT(smallest E) > 0",
        Test(">", 0.0),
        _sweep_gain("local_epochs"),
        reported="bwt_bound",
        rests_on=("learn_special_local_epochs",),
    ),
]
