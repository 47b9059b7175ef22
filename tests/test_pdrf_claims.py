"""PDRF's paper claims fail on counterfactual metrics (the ablation's numbers in the method's place), and claims
on a model that did not beat persistence are inconclusive, not evidence."""

import numpy as np
import pytest

from repro.papers.pdrf.claims import CLAIMS
from repro.reporting.claims import verdict

SCORES = ("csi_m", "late_csi_m", "late_csi_top")
MODELS = ("pdrf", "data_rf", "velocity_rf", "persistence", "sl_extrapolation")


def metrics(values=None, mse=None, spread=0.005):
    """Pooled scores per method, bootstrap replicates around them (the same draws for every method), and
    per-event MSEs in which every trained model learned (half persistence's error)."""
    values = {"pdrf": 0.4, "data_rf": 0.3, "velocity_rf": 0.2, "persistence": 0.1, "sl_extrapolation": 0.3} | (
        values or {}
    )
    noise = np.random.default_rng(0).normal(0, spread, 200)
    events = np.random.default_rng(1).uniform(50, 150, 40)
    mse = {"pdrf": 0.5, "data_rf": 0.5, "velocity_rf": 0.5, "persistence": 1.0, "sl_extrapolation": 0.6} | (mse or {})
    return {
        "checks": {"last_step_max_abs_diff": 1e-7, "data_space_residual_ratio": 0.0, "velocity_residual_ratio": 1.0},
        "skill": {m: {s: v for s in SCORES} for m, v in values.items()},
        "bootstrap": {
            "n": len(noise),
            "resampled": "test events",
            "scores": {s: {m: (v + noise).tolist() for m, v in values.items()} for s in SCORES},
        },
        "event_mse": {m: (f * events).tolist() for m, f in mse.items()},
    }


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("pdrf", "pdrf_data_space_beats_velocity")
def test_velocity_rf_ahead_fails():
    assert verdict(CLAIMS, "pdrf_data_space_beats_velocity", metrics({"velocity_rf": 0.35})) == "fails"


@pytest.mark.counterfactual("pdrf", "pdrf_teacher_raises_late_csi")
def test_teacher_without_gain_fails():
    assert verdict(CLAIMS, "pdrf_teacher_raises_late_csi", metrics({"pdrf": 0.3})) == "fails"


@pytest.mark.counterfactual("pdrf", "pdrf_beats_velocity_rf_csi_m")
def test_velocity_rf_numbers_in_pdrfs_place_fail():
    assert verdict(CLAIMS, "pdrf_beats_velocity_rf_csi_m", metrics({"pdrf": 0.2})) == "fails"


def test_the_interval_decides_a_small_gain():
    """A gain of 0.002 with replicates spread 0.005 around it is not a gain."""
    m = metrics({"pdrf": 0.302})
    m["bootstrap"]["scores"]["late_csi_m"]["data_rf"] = (0.3 + np.random.default_rng(7).normal(0, 0.005, 200)).tolist()
    assert verdict(CLAIMS, "pdrf_teacher_raises_late_csi", m) == "fails"


def test_a_model_no_better_than_persistence_makes_its_claims_inconclusive():
    m = metrics(mse={"velocity_rf": 0.95})
    assert verdict(CLAIMS, "learn_velocity_rf", m) == "fails"
    assert verdict(CLAIMS, "pdrf_data_space_beats_velocity", m) == "inconclusive"
    assert verdict(CLAIMS, "pdrf_teacher_raises_late_csi", m) == "pass"  # compares no velocity model


def test_checks_fail_when_broken_and_missing_inputs_fail():
    broken = metrics()
    broken["checks"] = {"last_step_max_abs_diff": 0.1, "data_space_residual_ratio": 0.5, "velocity_residual_ratio": 0.1}
    for claim in (
        "pdrf_last_step_is_network_output",
        "pdrf_oracle_perturbation_vanishes",
        "pdrf_oracle_velocity_keeps_perturbation",
    ):
        assert verdict(CLAIMS, claim, broken) == "fails"
    missing = metrics()
    del missing["skill"]["data_rf"]
    assert verdict(CLAIMS, "pdrf_teacher_raises_late_csi", missing) == "fails"
    assert verdict(CLAIMS, "pdrf_sl_beats_persistence", metrics({"sl_extrapolation": 0.05})) == "fails"
