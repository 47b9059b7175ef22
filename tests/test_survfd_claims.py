"""SurvFD's paper claims fail on counterfactual metrics the paper denies."""

import pytest

from repro.papers.survfd.claims import CLAIMS
from repro.reporting.claims import verdict


def metrics(**override):
    """Metrics shaped as the evaluate stage writes them, supporting every claim."""
    base = {
        "local_accuracy": {
            "ground_truth": {"hazard": 1e-16, "log_hazard": 1e-15, "survival": 1e-16},
            "fitted": {"gbsa/interaction__s0": 1e-16},
        },
        "closed_form": {"interaction_max_error": 1e-15, "main_effect_max_error": 1e-15},
        "time_variation": {"survival": [1.0, 1.05, 1.1], "log_hazard": [0.0, 0.0, 0.0]},
        "interaction_share": {"survival": [0.15, 0.16, 0.14], "log_hazard": [1e-15, 1e-15, 1e-15]},
        "curve_correlation": {"gbsa": [0.9, 0.92, 0.88], "coxph": [0.1, 0.0, -0.2]},
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("survfd", "survfd_survival_interaction_time_dependent")
def test_time_constant_survival_interaction_fails():
    m = metrics()
    flat = metrics(time_variation={"survival": m["time_variation"]["log_hazard"], "log_hazard": [0.0, 0.0, 0.0]})
    assert verdict(CLAIMS, "survfd_survival_interaction_time_dependent", flat) == "fails"


@pytest.mark.counterfactual("survfd", "survfd_additive_explanation_misses_mass")
def test_additive_survival_target_fails():
    m = metrics()
    additive = metrics(interaction_share={"survival": m["interaction_share"]["log_hazard"], "log_hazard": [0.0] * 3})
    assert verdict(CLAIMS, "survfd_additive_explanation_misses_mass", additive) == "fails"


@pytest.mark.counterfactual("survfd", "survfd_fitted_gbsa_recovers_interaction")
def test_shuffled_pairing_of_curves_fails():
    shuffled = metrics(curve_correlation={"gbsa": [-0.5, -0.25, -0.2]})
    assert verdict(CLAIMS, "survfd_fitted_gbsa_recovers_interaction", shuffled) == "fails"


def test_one_bad_seed_makes_the_interval_fail():
    assert (
        verdict(
            CLAIMS, "survfd_fitted_gbsa_recovers_interaction", metrics(curve_correlation={"gbsa": [0.95, 0.9, 0.3]})
        )
        == "fails"
    )


def test_inexact_enumeration_fails_the_checks():
    broken = metrics(closed_form={"interaction_max_error": 1e-3, "main_effect_max_error": float("nan")})
    assert verdict(CLAIMS, "survfd_closed_form_interaction", broken) == "fails"
    assert verdict(CLAIMS, "survfd_closed_form_main_effect", broken) == "fails"


def test_missing_inputs_give_failing_claims():
    broken = metrics()
    del broken["curve_correlation"]
    assert verdict(CLAIMS, "survfd_fitted_gbsa_recovers_interaction", broken) == "fails"
