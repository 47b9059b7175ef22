"""SPECIAL's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, seed_interval


def _paired(m: Mapping[str, Any], a: str, b: str, metric: str) -> Measured:
    """Seed-paired difference a - b of a per-seed metric, with its t interval."""
    x = np.asarray(m["methods"][a][metric], dtype=float)
    y = np.asarray(m["methods"][b][metric], dtype=float)
    return seed_interval(x - y)


def _bwt_gain(m: Mapping[str, Any]) -> Measured:
    return _paired(m, m["main_method"], "fedavg", "bwt")


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


CLAIMS = [
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
        "minus FedAvg's, paired over seeds, > 0 (whole 95% t interval)",
        Test(">", 0.0),
        _bwt_gain,
        reported="backward_transfer",
    ),
    ClaimSpec(
        "special_mu_raises_retention",
        "paper",
        "Larger server weight mu buys retention: BWT at the largest mu minus at mu = 0, paired over seeds, > 0",
        Test(">", 0.0),
        _mu_retention,
        reported="backward_transfer",
    ),
    ClaimSpec(
        "special_mu_costs_plasticity",
        "paper",
        "Larger mu costs plasticity: mean accuracy right after each task at the largest mu minus at mu = 0 < 0",
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
    ),
    ClaimSpec(
        "special_bwt_improves_with_rounds",
        "paper",
        "SPECIAL's BWT improves with more rounds per task T: BWT(largest T) - BWT(smallest T) > 0",
        Test(">", 0.0),
        _sweep_gain("rounds"),
        reported="bwt_bound",
    ),
    ClaimSpec(
        "special_bwt_improves_with_local_epochs",
        "paper",
        "SPECIAL's BWT improves with more local epochs E: BWT(largest E) - BWT(smallest E) > 0",
        Test(">", 0.0),
        _sweep_gain("local_epochs"),
        reported="bwt_bound",
    ),
]
