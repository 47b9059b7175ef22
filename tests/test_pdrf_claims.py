"""PDRF's paper claims fail on counterfactual metrics (the ablation's numbers in the method's place)."""

import pytest

from repro.papers.pdrf.claims import CLAIMS
from repro.reporting.claims import verdict


def skill(value, spread=0.005):
    scores = ("csi_m", "late_csi_m", "late_csi_top")
    return {f"s{i}": {k: value + d for k in scores} for i, d in enumerate((0.0, spread, -spread))}


def metrics(**override):
    base = {
        "checks": {"last_step_max_abs_diff": 1e-7, "data_space_residual_ratio": 0.0, "velocity_residual_ratio": 1.0},
        "skill": {
            "pdrf": skill(0.4),
            "data_rf": skill(0.3),
            "velocity_rf": skill(0.2),
            "persistence": {"s0": {"late_csi_m": 0.1}},
            "sl_extrapolation": {"s0": {"late_csi_m": 0.3}},
        },
    }
    return base | override


def with_skill(**methods):
    m = metrics()
    m["skill"] = m["skill"] | methods
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("pdrf", "pdrf_data_space_beats_velocity")
def test_velocity_rf_ahead_fails():
    assert verdict(CLAIMS, "pdrf_data_space_beats_velocity", with_skill(velocity_rf=skill(0.35))) == "fails"


@pytest.mark.counterfactual("pdrf", "pdrf_teacher_raises_late_csi")
def test_teacher_without_gain_fails():
    assert verdict(CLAIMS, "pdrf_teacher_raises_late_csi", with_skill(pdrf=skill(0.3, spread=0.02))) == "fails"


@pytest.mark.counterfactual("pdrf", "pdrf_beats_velocity_rf_csi_m")
def test_velocity_rf_numbers_in_pdrfs_place_fail():
    assert verdict(CLAIMS, "pdrf_beats_velocity_rf_csi_m", with_skill(pdrf=skill(0.2))) == "fails"


def test_checks_fail_when_broken_and_missing_inputs_fail():
    broken = metrics(
        checks={"last_step_max_abs_diff": 0.1, "data_space_residual_ratio": 0.5, "velocity_residual_ratio": 0.1}
    )
    for claim in (
        "pdrf_last_step_is_network_output",
        "pdrf_oracle_perturbation_vanishes",
        "pdrf_oracle_velocity_keeps_perturbation",
    ):
        assert verdict(CLAIMS, claim, broken) == "fails"
    missing = metrics()
    del missing["skill"]["data_rf"]
    assert verdict(CLAIMS, "pdrf_teacher_raises_late_csi", missing) == "fails"
