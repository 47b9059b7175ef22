"""pai-graphon's paper claims fail on counterfactual metrics (Random's numbers, or a flat prediction, in place
of the data-driven criterion's)."""

import copy

import numpy as np
import pytest

from repro.papers.pai_graphon.claims import CLAIMS
from repro.reporting.claims import verdict

WIDTHS = [128, 256, 512, 1024]
SEEDS = [0, 1, 2]


def criterion(cv_ratio, informative, fsm_scale, const_scale):
    """Per-width statistics of one criterion: FSM distance falling as width^-1/2 (jittered per seed)."""
    jitter = np.array([1.0, 1.1, 0.9])
    out = {
        "fsm": {
            "widths": WIDTHS,
            "distance": [(fsm_scale * w**-0.5 * jitter).tolist() for w in WIDTHS],
            "constant_distance": [(const_scale * np.ones(3)).tolist() for _ in WIDTHS],
        }
    }
    for w in WIDTHS:
        out[str(w)] = {
            "cv_ratio_in": [cv_ratio] * 3,
            "flatness_z": [2.0] * 3,
            "informative_fraction": [informative] * 3,
            "zero_input_max_abs_score": [0.0] * 3,
            "zero_input_kept_edges": [0] * 3,
        }
    return out


def metrics():
    syn = {
        "random": criterion(1.0, 0.0625, 0.5, 0.015),
        "magnitude": criterion(1.0, 0.0625, 0.5, 0.015),
        "snip": criterion(2.0, 0.3, 0.5, 0.1),
        "grasp": criterion(1.6, 0.25, 0.5, 0.08),
        "k_over_d": 4 / 64,
    }
    records = [
        {"criterion": c, "density": 0.1, "seed": k, "alignment": a + 0.01 * k, "test_accuracy": 0.8 + 0.01 * k}
        for k in range(5)
        for c, a in (("random", 0.30), ("snip", 0.40))
    ]
    return {
        "synthetic": syn,
        "digits": copy.deepcopy(syn),
        "train": {"records": records, "prior_accuracy": 0.5},
        "settings": {"widths": WIDTHS, "seeds": SEEDS, "density": 0.1, "blocks": 32, "informative_factor": 2.0},
    }


def with_random_in_place_of(m, c):
    out = copy.deepcopy(m)
    out["synthetic"][c] = copy.deepcopy(out["synthetic"]["random"])
    return out


def test_every_claim_passes_on_metrics_that_support_it():
    assert [c.id for c in CLAIMS if verdict(CLAIMS, c.id, metrics()) != "pass"] == []


@pytest.mark.counterfactual("pai-graphon", "converges_snip")
@pytest.mark.counterfactual("pai-graphon", "converges_grasp")
@pytest.mark.parametrize("c", ["snip", "grasp"])
def test_distance_to_the_prediction_not_falling_fails(c):
    m = metrics()
    fsm = m["synthetic"][c]["fsm"]
    fsm["distance"] = [[0.05, 0.055, 0.045] for _ in WIDTHS]
    assert verdict(CLAIMS, f"converges_{c}", m) == "fails"


@pytest.mark.counterfactual("pai-graphon", "fsm_beats_constant_snip")
@pytest.mark.counterfactual("pai-graphon", "fsm_beats_constant_grasp")
@pytest.mark.parametrize("c", ["snip", "grasp"])
def test_prediction_no_better_than_the_flat_graphon_fails(c):
    m = metrics()
    fsm = m["synthetic"][c]["fsm"]
    fsm["distance"] = copy.deepcopy(fsm["constant_distance"])
    assert verdict(CLAIMS, f"fsm_beats_constant_{c}", m) == "fails"


@pytest.mark.counterfactual("pai-graphon", "nonuniform_snip")
@pytest.mark.counterfactual("pai-graphon", "nonuniform_grasp")
@pytest.mark.counterfactual("pai-graphon", "informative_edges_snip")
@pytest.mark.counterfactual("pai-graphon", "informative_edges_grasp")
@pytest.mark.parametrize("claim", ["nonuniform", "informative_edges"])
@pytest.mark.parametrize("c", ["snip", "grasp"])
def test_random_masks_in_place_of_the_data_driven_ones_fail(claim, c):
    assert verdict(CLAIMS, f"{claim}_{c}", with_random_in_place_of(metrics(), c)) == "fails"


@pytest.mark.counterfactual("pai-graphon", "ntk_alignment_snip_over_random")
def test_snip_alignment_no_better_than_random_fails():
    m = metrics()
    for r in m["train"]["records"]:
        if r["criterion"] == "snip":
            r["alignment"] = 0.30 + 0.02 * ((r["seed"] % 2) - 0.5)
    assert verdict(CLAIMS, "ntk_alignment_snip_over_random", m) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    m = metrics()
    m["synthetic"]["snip"]["fsm"]["distance"][0][0] = float("nan")
    m["train"]["records"] = [r for r in m["train"]["records"] if not (r["criterion"] == "random" and r["seed"] == 0)]
    assert verdict(CLAIMS, "converges_snip", m) == "fails"
    assert verdict(CLAIMS, "ntk_alignment_snip_over_random", m) == "fails"


def test_networks_no_better_than_the_class_prior_fail_their_learning_check():
    m = metrics()
    for r in m["train"]["records"]:
        r["test_accuracy"] = 0.52
    assert verdict(CLAIMS, "learn_masked_networks", m) == "fails"
