"""SSCA's paper claims fail on counterfactual metrics (the baseline or ablation in SSCA's place)."""

import pytest

from repro.papers.ssca.claims import CLAIMS
from repro.reporting.claims import verdict


def metrics(**override):
    """Metrics shaped as the evaluate stage writes them, supporting every claim."""
    base = {
        "invariance": {"max_abs_warp_difference": 0.0, "max_abs_mean": 1e-5, "max_abs_var_minus_1": 0.005},
        "davis_kahan_ratios": [0.05, 0.1, 0.2],
        "hub_cycle_error": [0.0, 0.0],
        "sin_theta": {"ssca": [0.2, 0.25, 0.22, 0.21], "no_gaussianization": [0.9, 0.85, 0.95, 0.9]},
        "recall_at_1": {"ssca": [0.08, 0.09, 0.085, 0.082], "infonce": [0.04, 0.05, 0.045, 0.041]},
        "gate_design": {"false_alarms": 40, "misses": 20, "n": 800, "alpha": 0.05, "drift": 0.25},
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
    recall = {"ssca": [0.04, 0.05, 0.045, 0.041], "infonce": [0.04, 0.05, 0.045, 0.041]}
    assert verdict(CLAIMS, "ssca_recall_beats_infonce", metrics(recall_at_1=recall)) == "fails"


@pytest.mark.counterfactual("ssca", "ssca_gate_false_alarm_at_target")
def test_uncalibrated_gate_fails():
    gate = metrics()["gate_design"] | {"false_alarms": 120}
    assert verdict(CLAIMS, "ssca_gate_false_alarm_at_target", metrics(gate_design=gate)) == "fails"


@pytest.mark.counterfactual("ssca", "ssca_gate_miss_rate")
def test_blind_gate_fails():
    gate = metrics()["gate_design"] | {"misses": 400}
    assert verdict(CLAIMS, "ssca_gate_miss_rate", metrics(gate_design=gate)) == "fails"


def test_violated_bound_and_open_cycle_fail_their_checks():
    assert verdict(CLAIMS, "ssca_davis_kahan_holds", metrics(davis_kahan_ratios=[0.1, 1.2])) == "fails"
    assert verdict(CLAIMS, "ssca_hub_cycles_close", metrics(hub_cycle_error=[0.0, 0.01])) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    broken = metrics(
        invariance={"max_abs_warp_difference": 0.0, "max_abs_mean": float("nan"), "max_abs_var_minus_1": 0}
    )
    assert verdict(CLAIMS, "ssca_gaussianized_marginals", broken) == "fails"
    assert verdict(CLAIMS, "ssca_recall_beats_infonce", {"recall_at_1": {}}) == "fails"
