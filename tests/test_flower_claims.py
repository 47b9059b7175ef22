"""Flower's paper claims fail on counterfactual metrics (a baseline's numbers in Flower's place)."""

import pytest

from repro.papers.flower.claims import CLAIMS
from repro.reporting.claims import verdict


def runs(flower, fno, unet, seeds=3):
    jitter = [0.0, 0.01, -0.01][:seeds]
    return {
        "flower": {f"s{i}": flower + j for i, j in enumerate(jitter)},
        "fno": {f"s{i}": fno + j for i, j in enumerate(jitter)},
        "unet": {f"s{i}": unet + 0.5 * j for i, j in enumerate(jitter)},
    }


def metrics(**override):
    base = {
        "checks": {"identity_max_abs_diff": 0.0, "integer_roll_max_abs_diff": 0.0},
        "forward_time_slope": 1.0,
        "vrmse_next_step": {
            "advection": runs(0.3, 0.4, 0.4),
            "wave": runs(0.1, 0.2, 0.2, seeds=1),
            "burgers": runs(0.01, 0.02, 0.02, seeds=1),
        },
        "displacement_cosines": {"s0": [0.1, 0.8], "s1": [0.7, 0.2], "s2": [0.75, 0.0]},
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("flower", "flower_linear_cost")
def test_quadratic_cost_fails():
    assert verdict(CLAIMS, "flower_linear_cost", metrics(forward_time_slope=2.0)) == "fails"


@pytest.mark.counterfactual("flower", "flower_beats_fno_advection")
def test_fno_as_good_as_flower_fails():
    m = metrics()
    m["vrmse_next_step"]["advection"] = runs(0.4, 0.4, 0.5)
    assert verdict(CLAIMS, "flower_beats_fno_advection", m) == "fails"


@pytest.mark.counterfactual("flower", "flower_beats_unet_advection")
def test_unet_better_than_flower_fails():
    m = metrics()
    m["vrmse_next_step"]["advection"] = runs(0.4, 0.5, 0.35)
    assert verdict(CLAIMS, "flower_beats_unet_advection", m) == "fails"


@pytest.mark.counterfactual("flower", "flower_best_on_waves")
def test_baseline_best_on_waves_fails():
    m = metrics()
    m["vrmse_next_step"]["wave"] = runs(0.2, 0.1, 0.3, seeds=1)
    assert verdict(CLAIMS, "flower_best_on_waves", m) == "fails"


@pytest.mark.counterfactual("flower", "flower_best_on_burgers")
def test_baseline_best_on_burgers_fails():
    m = metrics()
    m["vrmse_next_step"]["burgers"] = runs(0.03, 0.02, 0.01, seeds=1)
    assert verdict(CLAIMS, "flower_best_on_burgers", m) == "fails"


@pytest.mark.counterfactual("flower", "flower_displacement_follows_velocity")
def test_displacements_unrelated_to_velocity_fail():
    m = metrics(displacement_cosines={"s0": [0.1, -0.2], "s1": [0.05, 0.0], "s2": [0.2, 0.1]})
    assert verdict(CLAIMS, "flower_displacement_follows_velocity", m) == "fails"


def test_broken_checks_and_missing_inputs_fail():
    m = metrics(checks={"identity_max_abs_diff": 0.1, "integer_roll_max_abs_diff": 1.0})
    assert verdict(CLAIMS, "flower_warp_identity", m) == "fails"
    assert verdict(CLAIMS, "flower_warp_integer_roll", m) == "fails"
    missing = metrics()
    del missing["vrmse_next_step"]
    assert verdict(CLAIMS, "flower_beats_fno_advection", missing) == "fails"
