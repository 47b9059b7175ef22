"""SSCA's paper claims fail on counterfactual metrics (the baseline or ablation in SSCA's place)."""

import copy

import numpy as np
import pytest

from repro.papers.ssca.claims import CLAIMS
from repro.reporting.claims import verdict

RNG = np.random.default_rng(0)


def ranks(level: float) -> list[list[float]]:
    """Per seed, the normalised rank of the true pair for 50 queries, around ``level``."""
    return np.clip(level + 0.05 * RNG.standard_normal((4, 50)), 0, 1).tolist()


def gate(misses: dict[str, int], false_alarms: int = 40, n: int = 800) -> dict:
    return {d: {"0.05": {"false_alarms": false_alarms, "misses": k, "n": n}} for d, k in misses.items()}


def metrics(**override):
    """Metrics shaped as the evaluate stage writes them, supporting every claim."""
    drifts = {"0.01": 100, "0.05": 20, "0.25": 0}
    base = {
        "invariance": {"max_abs_warp_difference": 0.0, "max_abs_mean": 1e-5, "max_abs_var_minus_1": 0.005},
        "davis_kahan_ratios": [0.05, 0.1, 0.2],
        "hub_cycle_error": [0.0, 0.0],
        "sin_theta": {"ssca": [0.2, 0.25, 0.22, 0.21], "no_gaussianization": [0.9, 0.85, 0.95, 0.9]},
        "recall_at_1": {
            "ssca": [0.08, 0.09, 0.085, 0.082],
            "infonce": [0.04, 0.05, 0.045, 0.041],
            "minus_sw_hub": [0.06, 0.07, 0.065, 0.06],
            "minus_spectral": [0.05, 0.06, 0.055, 0.052],
        },
        "pair_rank": {
            "ssca": ranks(0.08),
            "minus_spectral": ranks(0.1),
            "no_gaussianization": ranks(0.15),
            "infonce": ranks(0.12),
            "untrained": ranks(0.5),
        },
        "gaussianization": {"heldout_w2": [[0.01, 0.02, 0.015]] * 4, "heldout_w2_zscore": [[5.0, 0.5, 20.0]] * 4},
        "gate_alpha": 0.05,
        "gate_design": {"alpha": 0.05, "drifts": {d: c["0.05"] for d, c in gate({"0.05": 20, "0.25": 0}).items()}},
        "gate_miss_rate_per_seed": {"gaussianized": [0.05, 0.06, 0.04, 0.05], "zscore": [0.9, 0.95, 0.92, 0.94]},
        "gate": gate(drifts),
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert {c.id: verdict(CLAIMS, c.id, metrics()) for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


@pytest.mark.counterfactual("ssca", "ssca_gaussianization_stabilises_subspace")
def test_ablation_as_stable_as_ssca_fails():
    same = {"ssca": [0.2, 0.25, 0.22, 0.21], "no_gaussianization": [0.21, 0.24, 0.22, 0.2]}
    assert verdict(CLAIMS, "ssca_gaussianization_stabilises_subspace", metrics(sin_theta=same)) == "fails"


@pytest.mark.counterfactual("ssca", "ssca_recall_beats_infonce")
def test_infonce_numbers_in_ssca_place_fail():
    recall = metrics()["recall_at_1"] | {"ssca": [0.04, 0.05, 0.045, 0.041]}
    assert verdict(CLAIMS, "ssca_recall_beats_infonce", metrics(recall_at_1=recall)) == "fails"


@pytest.mark.counterfactual("ssca", "ssca_sw_hub_helps")
def test_training_to_the_hub_that_adds_nothing_fails():
    recall = metrics()["recall_at_1"] | {"minus_sw_hub": [0.08, 0.09, 0.085, 0.082]}
    assert verdict(CLAIMS, "ssca_sw_hub_helps", metrics(recall_at_1=recall)) == "fails"


@pytest.mark.counterfactual("ssca", "ssca_spectral_helps")
def test_a_random_start_as_good_as_the_spectral_one_fails():
    recall = metrics()["recall_at_1"] | {"minus_spectral": [0.081, 0.088, 0.086, 0.082]}
    assert verdict(CLAIMS, "ssca_spectral_helps", metrics(recall_at_1=recall)) == "fails"


def test_uncalibrated_gate_fails_the_check():
    design = copy.deepcopy(metrics()["gate_design"])
    for cell in design["drifts"].values():
        cell["false_alarms"] = 120
    assert verdict(CLAIMS, "ssca_gate_false_alarm_at_target", metrics(gate_design=design)) == "fails"
    assert next(c for c in CLAIMS if c.id == "ssca_gate_false_alarm_at_target").kind == "check"


@pytest.mark.counterfactual("ssca", "ssca_gate_miss_rate")
def test_a_gate_blind_to_the_smallest_drift_fails():
    design = {"alpha": 0.05, "drifts": {d: c["0.05"] for d, c in gate({"0.01": 400, "0.25": 0}).items()}}
    assert verdict(CLAIMS, "ssca_gate_miss_rate", metrics(gate_design=design)) == "fails"


@pytest.mark.counterfactual("ssca", "ssca_gate_gaussianization_sharpens")
def test_a_z_score_gate_as_sharp_as_the_gaussianized_one_fails():
    rates = {"gaussianized": [0.05, 0.06, 0.04, 0.05], "zscore": [0.06, 0.05, 0.05, 0.04]}
    assert verdict(CLAIMS, "ssca_gate_gaussianization_sharpens", metrics(gate_miss_rate_per_seed=rates)) == "fails"


def test_untrained_projectors_make_the_comparisons_inconclusive():
    m = metrics()
    m["pair_rank"] = m["pair_rank"] | {"infonce": m["pair_rank"]["untrained"]}
    assert verdict(CLAIMS, "ssca_infonce_learned", m) == "fails"
    assert verdict(CLAIMS, "ssca_recall_beats_infonce", m) == "inconclusive"
    assert verdict(CLAIMS, "ssca_sw_hub_helps", m) == "pass"
    m = metrics()
    m["gaussianization"] = m["gaussianization"] | {"heldout_w2": m["gaussianization"]["heldout_w2_zscore"]}
    assert verdict(CLAIMS, "ssca_gaussianization_learned", m) == "fails"
    assert verdict(CLAIMS, "ssca_gate_miss_rate", m) == "inconclusive"


def test_violated_bound_degenerate_gap_and_open_cycle_fail_their_checks():
    assert verdict(CLAIMS, "ssca_davis_kahan_holds", metrics(davis_kahan_ratios=[0.1, 1.2])) == "fails"
    assert verdict(CLAIMS, "ssca_davis_kahan_holds", metrics(davis_kahan_ratios=[0.1, float("nan")])) == "fails"
    assert verdict(CLAIMS, "ssca_hub_cycles_close", metrics(hub_cycle_error=[0.0, 0.01])) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    broken = metrics(
        invariance={"max_abs_warp_difference": 0.0, "max_abs_mean": float("nan"), "max_abs_var_minus_1": 0}
    )
    assert verdict(CLAIMS, "ssca_gaussianized_marginals", broken) == "fails"
    assert verdict(CLAIMS, "ssca_recall_beats_infonce", metrics(recall_at_1={})) == "fails"
