"""Neural Control's paper claims fail on counterfactual metrics (baselines' numbers in the method's place)."""

import copy

import pytest

from repro.papers.neural_control.claims import CLAIMS
from repro.reporting.claims import verdict

INITIAL = [[1e-2, 2e-2, 1.5e-2]] * 4  # untrained controller's loss per (case, seed)


def method(losses, branch=1.0):
    """A method's entry; its per-(case, seed) best losses are its per-seed medians repeated over 4 cases."""
    return {
        "median_loss_per_seed": losses,
        "mean_loss": sum(losses) / len(losses),
        "branch_success": branch,
        "best_loss": [list(losses)] * 4,
    }


def metrics(**override):
    """Metrics shaped as the evaluate stage writes them, with Adjoint+RHC ahead everywhere."""
    tasks = {
        t: {
            "methods": {
                "adjoint_rhc": method([1e-7, 2e-7, 1.5e-7], 1.0),
                "adjoint_only": method([1e-6, 2e-6, 1e-6], 0.5),
                "spsa": method([1e-4, 3e-4, 2e-4], 0.75),
                "cem": method([1e-3, 1e-3, 2e-3], 0.5),
            },
            "initial_loss": INITIAL,
        }
        for t in ("t1", "t2", "t3")
    }
    base = {
        "tasks": tasks,
        "fd_max_relative_error": 1e-10,
        "adjoint_memory_growth": 1.0,
        "unrolled_memory_growth": 10.0,
        "newton_iteration_ratio": 10.0,
        "learned": {
            "heldout_relative_error": 0.03,
            "ift_fd_relative_error_parameters": 1e-10,
            "ift_fd_relative_error_controls": 1e-10,
            "heldout_sq_error": [0.01, 0.02, 0.015, 0.01],
            "heldout_sq_error_of_mean": [1.0, 0.8, 1.2, 0.9],
            "initial_loss": [[1e-3, 2e-3, 1e-3]] * 2,
            "methods": {
                "adjoint_rhc": {"median_loss_per_seed": [1e-10, 3e-10, 2e-10], "max_segment_loss_median": 1e-9}
                | {"best_loss": [[1e-10, 3e-10, 2e-10]] * 2},
                "spsa": {"median_loss_per_seed": [1e-6, 2e-6, 1e-6], "max_segment_loss_median": float("nan")}
                | {"best_loss": [[1e-6, 2e-6, 1e-6]] * 2},
                "cem": {"median_loss_per_seed": [1e-5, 2e-5, 1e-5], "max_segment_loss_median": float("nan")}
                | {"best_loss": [[1e-5, 2e-5, 1e-5]] * 2},
            },
        },
    }
    return base | override


def swapped(task, baseline):
    m = copy.deepcopy(metrics())
    methods = m["tasks"][task]["methods"]
    methods["adjoint_rhc"], methods[baseline] = methods[baseline], methods["adjoint_rhc"]
    return m


def test_every_smoke_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS if "smoke" in c.scales)


def test_adjoint_memory_growing_like_unrolling_fails_the_check():
    assert verdict(CLAIMS, "nc_adjoint_memory_flat", metrics(adjoint_memory_growth=10.0)) == "fails"


def test_flat_unrolled_memory_fails_the_check():
    assert verdict(CLAIMS, "nc_unrolled_memory_grows", metrics(unrolled_memory_growth=1.0)) == "fails"


def test_memory_claims_are_checks():
    kinds = {c.id: c.kind for c in CLAIMS}
    assert kinds["nc_adjoint_memory_flat"] == kinds["nc_unrolled_memory_grows"] == "check"


def test_a_baseline_that_never_improved_on_its_start_makes_its_comparisons_inconclusive():
    m = metrics()
    m["tasks"]["t2"]["methods"]["spsa"]["best_loss"] = INITIAL
    assert verdict(CLAIMS, "nc_spsa_learned_t2", m) == "fails"
    assert verdict(CLAIMS, "nc_rhc_beats_spsa_t2", m) == "inconclusive"
    assert verdict(CLAIMS, "nc_rhc_beats_cem_t2", m) == "pass"


def test_an_equilibrium_model_no_better_than_the_mean_makes_the_deq_claims_inconclusive():
    m = metrics()
    m["learned"]["heldout_sq_error"] = m["learned"]["heldout_sq_error_of_mean"]
    assert verdict(CLAIMS, "nc_deq_model_learned", m) == "fails"
    assert verdict(CLAIMS, "nc_deq_rhc_beats_spsa", m) == "inconclusive"


@pytest.mark.parametrize("task", ["t1", "t2", "t3"])
@pytest.mark.parametrize("baseline", ["spsa", "cem"])
def test_baseline_in_the_methods_place_fails(task, baseline):
    assert verdict(CLAIMS, f"nc_rhc_beats_{baseline}_{task}", swapped(task, baseline)) == "fails"


@pytest.mark.counterfactual("neural-control", "nc_rhc_beats_spsa_t1")
def test_spsa_ahead_on_t1_fails():
    assert verdict(CLAIMS, "nc_rhc_beats_spsa_t1", swapped("t1", "spsa")) == "fails"


@pytest.mark.counterfactual("neural-control", "nc_rhc_beats_cem_t1")
def test_cem_ahead_on_t1_fails():
    assert verdict(CLAIMS, "nc_rhc_beats_cem_t1", swapped("t1", "cem")) == "fails"


@pytest.mark.counterfactual("neural-control", "nc_rhc_beats_spsa_t2")
def test_spsa_ahead_on_t2_fails():
    assert verdict(CLAIMS, "nc_rhc_beats_spsa_t2", swapped("t2", "spsa")) == "fails"


@pytest.mark.counterfactual("neural-control", "nc_rhc_beats_cem_t2")
def test_cem_ahead_on_t2_fails():
    assert verdict(CLAIMS, "nc_rhc_beats_cem_t2", swapped("t2", "cem")) == "fails"


def learned_swapped(baseline: str) -> dict:
    m = copy.deepcopy(metrics())
    methods = m["learned"]["methods"]
    methods["adjoint_rhc"], methods[baseline] = methods[baseline], methods["adjoint_rhc"]
    return m


@pytest.mark.counterfactual("neural-control", "nc_deq_rhc_beats_spsa")
def test_spsa_ahead_through_the_learned_model_fails():
    assert verdict(CLAIMS, "nc_deq_rhc_beats_spsa", learned_swapped("spsa")) == "fails"


@pytest.mark.counterfactual("neural-control", "nc_deq_rhc_beats_cem")
def test_cem_ahead_through_the_learned_model_fails():
    assert verdict(CLAIMS, "nc_deq_rhc_beats_cem", learned_swapped("cem")) == "fails"


@pytest.mark.counterfactual("neural-control", "nc_deq_segment_loss")
def test_segment_losses_far_above_the_papers_fail():
    m = copy.deepcopy(metrics())
    m["learned"]["methods"]["adjoint_rhc"]["max_segment_loss_median"] = 1e-4
    assert verdict(CLAIMS, "nc_deq_segment_loss", m) == "fails"


def test_learned_model_checks_fail_on_a_wrong_gradient_or_a_poor_fit():
    m = copy.deepcopy(metrics())
    m["learned"]["ift_fd_relative_error_controls"] = 0.3
    m["learned"]["heldout_relative_error"] = 0.5
    assert verdict(CLAIMS, "nc_deq_implicit_gradients_match_fd", m) == "fails"
    assert verdict(CLAIMS, "nc_deq_fits_heldout_equilibria", m) == "fails"


@pytest.mark.counterfactual("neural-control", "nc_rhc_beats_spsa_t3")
def test_spsa_ahead_on_t3_fails():
    assert verdict(CLAIMS, "nc_rhc_beats_spsa_t3", swapped("t3", "spsa")) == "fails"


@pytest.mark.counterfactual("neural-control", "nc_rhc_beats_cem_t3")
def test_cem_ahead_on_t3_fails():
    assert verdict(CLAIMS, "nc_rhc_beats_cem_t3", swapped("t3", "cem")) == "fails"


def test_a_tie_within_seed_noise_fails():
    m = copy.deepcopy(metrics())
    m["tasks"]["t1"]["methods"]["spsa"] = method([1e-7, 3e-7, 1e-7])
    assert verdict(CLAIMS, "nc_rhc_beats_spsa_t1", m) == "fails"


@pytest.mark.counterfactual("neural-control", "nc_rhc_branch_success")
def test_rhc_reaching_the_branch_less_often_fails():
    assert verdict(CLAIMS, "nc_rhc_branch_success", swapped("t3", "adjoint_only")) == "fails"


@pytest.mark.counterfactual("neural-control", "nc_full_loss_order_t1")
@pytest.mark.counterfactual("neural-control", "nc_full_loss_order_t2")
@pytest.mark.counterfactual("neural-control", "nc_full_loss_order_t3")
@pytest.mark.parametrize("task", ["t1", "t2", "t3"])
def test_full_scale_loss_far_from_the_papers_fails(task):
    m = copy.deepcopy(metrics())
    m["tasks"][task]["methods"]["adjoint_rhc"]["mean_loss"] = 1e-2
    assert verdict(CLAIMS, f"nc_full_loss_order_{task}", m, scale="full") == "fails"


def test_missing_or_nan_inputs_give_failing_claims():
    broken = metrics(fd_max_relative_error=float("nan"))
    del broken["tasks"]["t3"]
    assert verdict(CLAIMS, "nc_adjoint_matches_finite_differences", broken) == "fails"
    # a missing task fails its learning checks, so the claims resting on them are inconclusive
    assert verdict(CLAIMS, "nc_spsa_learned_t3", broken) == "fails"
    assert verdict(CLAIMS, "nc_rhc_beats_spsa_t3", broken) == "inconclusive"
    assert verdict(CLAIMS, "nc_rhc_branch_success", broken) == "inconclusive"
