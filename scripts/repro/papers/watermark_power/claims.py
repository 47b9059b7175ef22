"""Power-calibrated watermarking's claims as functions of the evaluate stage's metrics (repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, bootstrap_interval, seed_interval

MOST = 0.8  # "most cells" in the brief's smoke claim, fixed before any run


def _inside_share(m: Mapping[str, Any]) -> Measured:
    cells = m["cells"]
    inside = [c["empirical"]["low"] <= c["predicted"] <= c["empirical"]["high"] for c in cells]
    return Measured(float(np.mean(inside)) if cells else float("nan"), None, {"cells": len(cells)})


def _fpr_gap(m: Mapping[str, Any]) -> Measured:
    """Largest distance of alpha from a false-positive rate's Clopper-Pearson interval (human and LM text)."""
    rows = m["false_positive"]
    gaps = [np.max([0.0, r["low"] - r["alpha"], r["alpha"] - r["high"]]) for r in rows]
    return Measured(float(np.max(gaps)) if rows else float("nan"), None, {"rates": [r["rate"] for r in rows]})


def _real_lm_gap(m: Mapping[str, Any]) -> Measured:
    """Largest distance of the predicted power from the empirical Clopper-Pearson interval, real-LM cells."""
    cells = m["real_lm"]["cells"]
    gaps = [
        np.max([0.0, c["empirical"]["low"] - c["predicted"], c["predicted"] - c["empirical"]["high"]]) for c in cells
    ]
    details = {f"{c['gamma']},{c['delta']}": [c["predicted"], c["empirical"]["rate"]] for c in cells}
    return Measured(float(np.max(gaps)) if cells else float("nan"), None, details)


def _kl_inside_share(m: Mapping[str, Any]) -> Measured:
    """Share of cells whose empirical-minus-predicted KL interval (paired per sequence) contains 0."""
    cells = m["cells"]
    inside = [c["kl_gap"]["low"] <= 0.0 <= c["kl_gap"]["high"] for c in cells]
    return Measured(float(np.mean(inside)) if cells else float("nan"), None, {"cells": len(cells)})


def _heuristic_saving(m: Mapping[str, Any]) -> Measured:
    """Mean over heuristics of the relative distortion saving 1 - KL(choice) / KL(heuristic), empirical KL
    per sequence, paired bootstrap over sequences; NaN when a choice's power is clearly below its heuristic's
    (Clopper-Pearson intervals apart) or a heuristic is not on the grid."""
    rows = m["heuristics"]
    if not rows or any(r["choice"] is None for r in rows):
        return Measured(float("nan"), None, {"error": "a heuristic is not a grid cell"})
    weaker = [r["name"] for r in rows if r["choice_power"]["high"] < r["heuristic_power"]["low"]]
    details = {
        r["name"]: {
            "heuristic": r["heuristic"],
            "choice": r["choice"],
            "power": [r["heuristic_power"]["rate"], r["choice_power"]["rate"]],
            "kl": [float(np.mean(r["heuristic_kl"])), float(np.mean(r["choice_kl"]))],
        }
        for r in rows
    }
    if weaker:
        return Measured(float("nan"), None, details | {"clearly_less_powerful": weaker})
    arrays = [np.asarray(r[k], dtype=float) for r in rows for k in ("choice_kl", "heuristic_kl")]

    def saving(*a: np.ndarray) -> float:
        return float(np.mean([1.0 - np.mean(a[2 * k]) / np.mean(a[2 * k + 1]) for k in range(len(rows))]))

    result = bootstrap_interval(arrays, saving, paired=True, n_resamples=1000)
    result.details = details
    return result


def _dominated(m: Mapping[str, Any]) -> float:
    chosen = [c for c in m["calibration"] if c["choice"] is not None]
    return float(np.sum([len(c["dominated_by"]) > 0 for c in chosen])) if chosen else float("nan")


CLAIMS = [
    ClaimSpec(
        "wm_kl_identity",
        "check",
        "Closed-form KL(p~||p) = delta p~(G) - log(1 + (e^delta - 1) p(G)) matches direct summation over the "
        "vocabulary (and p~(G) matches the watermarked distribution's green mass): largest error <= 1e-9",
        Test("<=", 1e-9),
        lambda m: m["kl_identity_error"],
    ),
    ClaimSpec(
        "wm_hash_deterministic",
        "check",
        "Keyed green lists: the same key gives the same lists, another key agrees on about half the "
        "memberships: violations (unequal same-key lists, plus another key agreeing above 0.6) = 0",
        Test("<=", 0.0),
        lambda m: float(not m["hash_same_key_equal"]) + float(m["hash_other_key_agreement"] > 0.6),
    ),
    ClaimSpec(
        "wm_fpr_at_level",
        "paper",
        "The z-test detector's false-positive rate on held-out human Shakespeare and on unwatermarked "
        "bigram-LM text is at its nominal level: every alpha lies in the rate's Clopper-Pearson 95% interval "
        "(largest distance = 0), every gamma",
        Test("<=", 0.0),
        _fpr_gap,
        rests_on=(),
    ),
    ClaimSpec(
        "wm_power_prediction",
        "paper",
        f"Power predicted from unwatermarked calibration samples (the power formula with the LM's exact p(G)) "
        f"lies inside the Clopper-Pearson 95% interval of the empirical power in at least {MOST:.0%} of "
        "(gamma, delta, T) cells (bigram Kneser-Ney LM as the small-scale stand-in for an LLM)",
        Test(">=", MOST),
        _inside_share,
        rests_on=(),
    ),
    ClaimSpec(
        "wm_real_lm_power_prediction",
        "paper",
        "On the real SmolLM2-135M-Instruct (a small validation set of sampled generations, T tokens each), the "
        "power predicted from unwatermarked generations' p(G) lies inside the Clopper-Pearson 95% interval of "
        "the watermarked generations' z-test detection rate in every (gamma, delta) cell (largest distance = 0)",
        Test("<=", 0.0),
        _real_lm_gap,
        rests_on=(),
    ),
    ClaimSpec(
        "wm_power_monotone",
        "paper",
        "Empirical power increases with delta and with T: adjacent grid steps where power drops with "
        "non-overlapping binomial intervals = 0",
        Test("<=", 0.0),
        lambda m: float(m["power_drops_with_delta"] + m["power_drops_with_length"]),
        rests_on=(),
    ),
    ClaimSpec(
        "wm_distortion_grows_with_delta",
        "check",
        "Distortion (mean per-token KL along watermarked generations, exact under the LM) increases with "
        "delta for every gamma: decreases = 0 (a check: the per-step KL is increasing in delta for any p(G))",
        Test("<=", 0.0),
        lambda m: float(m["kl_drops_with_delta"]),
    ),
    ClaimSpec(
        "wm_distortion_prediction",
        "paper",
        f"Distortion predicted from unwatermarked calibration samples (the exact per-step KL at their p(G)) "
        f"matches the empirical distortion along the watermarked generations: the 95% interval of the paired "
        f"per-sequence difference contains 0 in at least {MOST:.0%} of (gamma, delta, T) cells (bigram LM)",
        Test(">=", MOST),
        _kl_inside_share,
        rests_on=(),
    ),
    ClaimSpec(
        "wm_low_entropy_lowers_power",
        "paper",
        "Low-entropy contexts lower power: in unsaturated cells, empirical power of the higher-entropy half of "
        "the sequences minus the lower half, mean over cells with t interval > 0",
        Test(">", 0.0),
        lambda m: seed_interval(m["entropy_power_gap"]),
        rests_on=(),
    ),
    ClaimSpec(
        "wm_calibrated_on_front",
        "paper",
        "Each calibrated (gamma, delta) (largest predicted power within a predicted KL budget) is on the "
        "empirical power-distortion Pareto front within binomial intervals: budgets where a cell with no more "
        "KL has clearly higher power = 0",
        Test("<=", 0.0),
        _dominated,
        rests_on=(),
    ),
    ClaimSpec(
        "wm_calibrated_beats_heuristics",
        "paper",
        "Calibration beats the heuristics: for KGW's default (0.25, 2) and the common (0.5, 1), the grid cell "
        "of least predicted KL whose predicted power is at least the heuristic's (chosen from calibration "
        "predictions alone) has empirical power not clearly below the heuristic's and lower empirical "
        "distortion: mean relative KL saving over the two heuristics > 0, paired bootstrap interval over "
        "sequences, at the calibration length",
        Test(">", 0.0),
        _heuristic_saving,
        rests_on=(),
    ),
]
