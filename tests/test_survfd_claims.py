"""SurvFD's paper claims fail on counterfactual metrics the paper denies."""

import numpy as np
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
        "fitted_time_variation": {"gbsa": [0.8, 0.9, 0.85]},
        "fitted_interaction_share": {"gbsa": {"interaction": [0.3, 0.32, 0.31], "additive": [0.12, 0.13, 0.11]}},
        "learning": learned(),
    }
    return base | override


def learned(n=300):
    """Per-subject Brier excess over the truth of fitted models (0.01) and of Kaplan-Meier (0.05)."""
    rng = np.random.default_rng(0)
    model = (0.01 + 0.002 * rng.standard_normal(n)).tolist()
    return {"gbsa": model, "coxph": model, "trivial": (0.05 + 0.01 * rng.standard_normal(n)).tolist()}


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


def test_the_closed_form_checks_fail_on_a_time_constant_or_additive_target():
    m = metrics()
    flat = metrics(time_variation={"survival": m["time_variation"]["log_hazard"], "log_hazard": [0.0, 0.0, 0.0]})
    assert verdict(CLAIMS, "survfd_truth_survival_interaction_time_dependent", flat) == "fails"
    additive = metrics(interaction_share={"survival": m["interaction_share"]["log_hazard"], "log_hazard": [0.0] * 3})
    assert verdict(CLAIMS, "survfd_truth_additive_misses_mass", additive) == "fails"


@pytest.mark.counterfactual("survfd", "survfd_fitted_survival_interaction_time_dependent")
def test_a_fitted_model_with_time_constant_interaction_fails():
    flat = metrics(fitted_time_variation={"gbsa": [0.02, 0.0, 0.05]})
    assert verdict(CLAIMS, "survfd_fitted_survival_interaction_time_dependent", flat) == "fails"


@pytest.mark.counterfactual("survfd", "survfd_order1_misses_fitted_interaction")
def test_no_more_missed_mass_with_the_interaction_than_without_fails():
    """The fitted interaction model leaves as little to order 2 as the additive fit: it learned no interaction."""
    same = {"gbsa": {"interaction": [0.12, 0.14, 0.11], "additive": [0.12, 0.13, 0.11]}}
    assert verdict(CLAIMS, "survfd_order1_misses_fitted_interaction", metrics(fitted_interaction_share=same)) == "fails"


def test_a_model_no_better_than_kaplan_meier_makes_the_fitted_claims_inconclusive():
    m = metrics()
    m["learning"]["gbsa"] = m["learning"]["trivial"]
    assert verdict(CLAIMS, "learn_gbsa", m) == "fails"
    assert verdict(CLAIMS, "survfd_order1_misses_fitted_interaction", m) == "inconclusive"
    assert verdict(CLAIMS, "survfd_fitted_gbsa_recovers_interaction", m) == "inconclusive"


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
