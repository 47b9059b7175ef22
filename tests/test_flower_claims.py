"""Flower's paper claims fail on counterfactual metrics (a baseline's numbers in Flower's place); claims on a
model that did not beat persistence are inconclusive."""

import numpy as np
import pytest

from repro.papers.flower.claims import CLAIMS, FULL_SCALE
from repro.reporting.claims import verdict

TASKS = ("advection", "wave", "burgers")
N = 16


def per_sample(flower, fno, unet, persistence=1.0, seed=0):
    """Per-trajectory errors: each model's level times shared trajectory difficulty, plus a little noise."""
    rng = np.random.default_rng(seed)
    difficulty = rng.uniform(0.8, 1.2, N)
    levels = {"flower": flower, "fno": fno, "unet": unet, "persistence": persistence}
    return {m: (v * difficulty * (1 + 0.01 * rng.standard_normal(N))).tolist() for m, v in levels.items()}


def metrics(next_override=None, rollout_override=None, cosine=0.9, slope=1.0):
    nxt = {t: per_sample(0.3, 0.5, 0.5, seed=i) for i, t in enumerate(TASKS)} | (next_override or {})
    roll = {t: per_sample(0.5, 0.8, 0.8, persistence=2.0, seed=i) for i, t in enumerate(TASKS)} | (
        rollout_override or {}
    )
    boot = list(np.random.default_rng(3).normal(cosine, 0.02, 200))
    return {
        "checks": {"identity_max_abs_diff": 0.0, "integer_roll_max_abs_diff": 0.0},
        "forward_time": {"slope": slope, "bootstrap": list(slope + np.random.default_rng(4).normal(0, 0.02, 200))},
        "per_sample": {"next": nxt, "rollout": roll},
        "displacement_cosines": {"s0": [0.1, cosine]},
        "displacement_bootstrap": {"s0": boot},
        "reported": {k: 0.3 if kind == "next" else 0.5 for k, (_, kind) in FULL_SCALE.items()},
    }


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS if "smoke" in c.scales)
    full = [c for c in CLAIMS if c.id.startswith("paper_")]
    assert full and all(verdict(CLAIMS, c.id, metrics(), scale="full") == "pass" for c in full)


def test_quadratic_cost_fails_the_check():
    assert verdict(CLAIMS, "flower_linear_cost", metrics(slope=2.0)) == "fails"


@pytest.mark.counterfactual("flower", "flower_beats_fno_advection")
def test_fno_as_good_as_flower_fails():
    m = metrics({"advection": per_sample(0.5, 0.5, 0.6)})
    assert verdict(CLAIMS, "flower_beats_fno_advection", m) == "fails"


@pytest.mark.counterfactual("flower", "flower_beats_unet_advection")
def test_unet_better_than_flower_fails():
    m = metrics({"advection": per_sample(0.4, 0.5, 0.35)})
    assert verdict(CLAIMS, "flower_beats_unet_advection", m) == "fails"


@pytest.mark.counterfactual("flower", "flower_best_on_waves")
def test_baseline_best_on_waves_fails():
    assert verdict(CLAIMS, "flower_best_on_waves", metrics({"wave": per_sample(0.4, 0.3, 0.5)})) == "fails"


@pytest.mark.counterfactual("flower", "flower_best_on_burgers")
def test_baseline_best_on_burgers_fails():
    assert verdict(CLAIMS, "flower_best_on_burgers", metrics({"burgers": per_sample(0.3, 0.5, 0.25)})) == "fails"


def rollout_fails(task):
    m = metrics(rollout_override={task: per_sample(0.9, 0.6, 0.8, persistence=2.0)})
    return verdict(CLAIMS, f"flower_best_rollout_{task}", m) == "fails"


@pytest.mark.counterfactual("flower", "flower_best_rollout_advection")
def test_a_baseline_rolling_out_better_on_advection_fails():
    assert rollout_fails("advection")


@pytest.mark.counterfactual("flower", "flower_best_rollout_wave")
def test_a_baseline_rolling_out_better_on_waves_fails():
    assert rollout_fails("wave")


@pytest.mark.counterfactual("flower", "flower_best_rollout_burgers")
def test_a_baseline_rolling_out_better_on_burgers_fails():
    assert rollout_fails("burgers")


@pytest.mark.counterfactual("flower", "flower_displacement_follows_velocity")
def test_displacements_unrelated_to_velocity_fail():
    assert verdict(CLAIMS, "flower_displacement_follows_velocity", metrics(cosine=0.2)) == "fails"


def far_from_paper_fails(key):
    m = metrics()
    m["reported"][key] = 0.1
    return verdict(CLAIMS, f"paper_{key}", m, scale="full") == "fails"


@pytest.mark.counterfactual("flower", "paper_vrmse_next_step_shear_flow")
def test_shear_flow_next_step_far_from_the_paper_fails():
    assert far_from_paper_fails("vrmse_next_step_shear_flow")


@pytest.mark.counterfactual("flower", "paper_vrmse_rollout_1to20_shear_flow")
def test_shear_flow_rollout_far_from_the_paper_fails():
    assert far_from_paper_fails("vrmse_rollout_1to20_shear_flow")


@pytest.mark.counterfactual("flower", "paper_vrmse_next_step_acoustic_scattering_maze")
def test_maze_next_step_far_from_the_paper_fails():
    assert far_from_paper_fails("vrmse_next_step_acoustic_scattering_maze")


@pytest.mark.counterfactual("flower", "paper_vrmse_rollout_1to20_acoustic_scattering_maze")
def test_maze_rollout_far_from_the_paper_fails():
    assert far_from_paper_fails("vrmse_rollout_1to20_acoustic_scattering_maze")


def test_a_model_no_better_than_persistence_makes_its_claims_inconclusive():
    m = metrics({"wave": per_sample(0.3, 0.9, 0.5)})
    assert verdict(CLAIMS, "learn_wave_fno", m) == "fails"
    assert verdict(CLAIMS, "flower_best_on_waves", m) == "inconclusive"
    assert verdict(CLAIMS, "flower_beats_fno_advection", m) == "pass"


def test_broken_checks_and_missing_inputs_fail():
    m = metrics()
    m["checks"] = {"identity_max_abs_diff": 0.1, "integer_roll_max_abs_diff": 1.0}
    assert verdict(CLAIMS, "flower_warp_identity", m) == "fails"
    assert verdict(CLAIMS, "flower_warp_integer_roll", m) == "fails"
    missing = metrics()
    del missing["per_sample"]["next"]["advection"]["fno"]
    assert verdict(CLAIMS, "flower_beats_fno_advection", missing) != "pass"
