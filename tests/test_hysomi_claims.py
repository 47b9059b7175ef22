"""HySoMi's paper claims fail on counterfactual metrics (a baseline's numbers in the hybrid's place)."""

import copy

import pytest

from repro.papers.hysomi.claims import CLAIMS
from repro.reporting.claims import verdict

TRIVIAL = [1.0, 1.2, 0.8, 1.1, 0.9, 1.0]  # the midpoint start's observed error per test sample


def method(observed, unobserved, cv=None):
    by_n = {
        str(n): {"observed_per_seed": [o + 0.1 * (32 - n) / 8 for o in observed], "unobserved_per_seed": unobserved}
        for n in (8, 16, 32)
    }
    out = {"by_n_train": by_n, "conservation_drift": 1e-15, "bound_margin": 0.01, "min_state": 0.0}
    out["observed_per_sample_per_member"] = [[t * o for t in TRIVIAL] for o in observed]
    if cv is not None:
        out["equifinality_cv_per_sample"] = cv
    return out


def metrics():
    """Metrics shaped as the evaluate stage writes them, with the constrained hybrid ahead everywhere."""
    methods = {
        "constrained": method([0.20, 0.21, 0.19], [0.30, 0.31, 0.29], [0.05, 0.06, 0.04, 0.05]),
        "unconstrained": method([0.21, 0.22, 0.20], [0.50, 0.55, 0.52], [0.20, 0.25, 0.22, 0.21]),
        "global": method([0.60, 0.61, 0.62], [0.90, 0.95, 0.93]),
        "per_sample": method([0.40, 0.42, 0.41], [0.60, 0.62, 0.61]),
        "two_step": method([0.35, 0.36, 0.34], [0.70, 0.72, 0.71]),
    }
    level = {
        "n_train": [8, 16, 32],
        "main_n_train": 32,
        "methods": methods,
        "trivial": {"observed_per_sample": TRIVIAL},
    }
    return {"levels": {"L2": level}}


def replaced(target: str, source: str) -> dict:
    m = copy.deepcopy(metrics())
    methods = m["levels"]["L2"]["methods"]
    methods[target] = copy.deepcopy(methods[source])
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    assert {c.id: verdict(CLAIMS, c.id, metrics()) for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


def test_a_global_calibration_no_better_than_its_start_makes_its_comparisons_inconclusive():
    m = copy.deepcopy(metrics())
    m["levels"]["L2"]["methods"]["global"]["observed_per_sample_per_member"] = [TRIVIAL] * 3
    assert verdict(CLAIMS, "hysomi_global_learned", m) == "fails"
    assert verdict(CLAIMS, "hysomi_traits_beat_global", m) == "inconclusive"
    assert verdict(CLAIMS, "hysomi_ranking", m) == "inconclusive"
    assert verdict(CLAIMS, "hysomi_beats_two_step", m) == "pass"


@pytest.mark.counterfactual("hysomi", "hysomi_traits_beat_global")
def test_global_calibration_in_the_hybrids_place_fails():
    assert verdict(CLAIMS, "hysomi_traits_beat_global", replaced("constrained", "global")) == "fails"


@pytest.mark.counterfactual("hysomi", "hysomi_beats_per_sample")
def test_per_sample_calibration_as_good_fails():
    assert verdict(CLAIMS, "hysomi_beats_per_sample", replaced("per_sample", "constrained")) == "fails"


@pytest.mark.counterfactual("hysomi", "hysomi_beats_two_step")
def test_two_step_as_good_fails():
    assert verdict(CLAIMS, "hysomi_beats_two_step", replaced("two_step", "constrained")) == "fails"


@pytest.mark.counterfactual("hysomi", "hysomi_constraints_help_unobserved")
def test_unconstrained_in_the_constrained_place_fails():
    assert verdict(CLAIMS, "hysomi_constraints_help_unobserved", replaced("constrained", "unconstrained")) == "fails"


@pytest.mark.counterfactual("hysomi", "hysomi_observed_kept")
def test_observed_error_far_above_unconstrained_fails():
    m = metrics()
    m["levels"]["L2"]["methods"]["constrained"] = method([0.40, 0.41, 0.42], [0.30, 0.31, 0.29], [0.05] * 4)
    assert verdict(CLAIMS, "hysomi_observed_kept", m) == "fails"


@pytest.mark.counterfactual("hysomi", "hysomi_equifinality")
def test_unconstrained_spread_in_the_constrained_place_fails():
    assert verdict(CLAIMS, "hysomi_equifinality", replaced("constrained", "unconstrained")) == "fails"


@pytest.mark.counterfactual("hysomi", "hysomi_more_data_helps")
def test_error_flat_in_training_size_fails():
    m = metrics()
    by_n = m["levels"]["L2"]["methods"]["constrained"]["by_n_train"]
    by_n["8"] = copy.deepcopy(by_n["32"])
    assert verdict(CLAIMS, "hysomi_more_data_helps", m) == "fails"


@pytest.mark.counterfactual("hysomi", "hysomi_ranking")
def test_global_better_than_unconstrained_on_unobserved_fails():
    assert verdict(CLAIMS, "hysomi_ranking", replaced("global", "constrained")) == "fails"


def test_checks_fail_when_the_property_is_broken():
    m = metrics()
    m["levels"]["L2"]["methods"]["two_step"]["bound_margin"] = -0.1
    m["levels"]["L2"]["methods"]["constrained"]["conservation_drift"] = 1e-6
    assert verdict(CLAIMS, "hysomi_bounds", m) == "fails"
    assert verdict(CLAIMS, "hysomi_conservation", m) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    m = metrics()
    m["levels"]["L2"]["methods"]["constrained"]["by_n_train"]["32"]["unobserved_per_seed"] = [0.3, float("nan"), 0.3]
    del m["levels"]["L2"]["methods"]["per_sample"]
    assert verdict(CLAIMS, "hysomi_constraints_help_unobserved", m) == "fails"
    assert verdict(CLAIMS, "hysomi_ranking", m) == "fails"
    # a missing method fails its learning check: the claim comparing it is inconclusive
    assert verdict(CLAIMS, "hysomi_per_sample_learned", m) == "fails"
    assert verdict(CLAIMS, "hysomi_beats_per_sample", m) == "inconclusive"
