"""Geo-NeW's paper claims fail on counterfactual metrics (the baseline's numbers in Geo-NeW's place)."""

import copy

import pytest

from repro.papers.geo_newf.claims import CLAIMS
from repro.reporting.claims import verdict


def metrics():
    """Metrics shaped as the evaluate stage writes them, with Geo-NeW generalising better."""
    return {
        "models": {
            "geonew": {
                "id_error": [0.10, 0.11, 0.105],
                "id_error_per_mesh": [[0.1, 0.12, 0.08, 0.1]] * 3,
                "ood_error": [0.24, 0.25, 0.25],
                "ood_id_ratio": [1.2, 1.14, 1.19],
                "pou_max_error": 4e-16,
                "global_balance_max": 1e-15,
                "local_residual_max": 1e-14,
                "min_jacobian_eigenvalue": 0.1,
                "newton_converged_fraction": 1.0,
            },
            "regression": {
                "id_error": [0.2, 0.22, 0.21],
                "id_error_per_mesh": [[0.2, 0.22, 0.18, 0.24]] * 3,
                "ood_error": [0.3, 0.33, 0.32],
                "ood_id_ratio": [3.0, 2.75, 2.9],
            },
        },
        "trivial": {"constant": 1.0, "id_error_per_mesh": [0.6, 0.7, 0.65, 0.6]},
    }


def swapped():
    m = copy.deepcopy(metrics())
    geo, reg = m["models"]["geonew"], m["models"]["regression"]
    for key in ("id_error", "ood_error", "ood_id_ratio"):
        geo[key], reg[key] = reg[key], geo[key]
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("geo-newf", "geonew_smaller_ood_degradation")
def test_baseline_degrading_less_fails():
    assert verdict(CLAIMS, "geonew_smaller_ood_degradation", swapped()) == "fails"


@pytest.mark.counterfactual("geo-newf", "geonew_lower_ood_error")
def test_baseline_lower_ood_error_fails():
    assert verdict(CLAIMS, "geonew_lower_ood_error", swapped()) == "fails"


@pytest.mark.counterfactual("geo-newf", "geonew_lower_id_error")
def test_baseline_lower_id_error_fails():
    assert verdict(CLAIMS, "geonew_lower_id_error", swapped()) == "fails"


def test_a_model_no_better_than_a_constant_field_makes_the_comparisons_inconclusive():
    m = copy.deepcopy(metrics())
    m["models"]["regression"]["id_error_per_mesh"] = [m["trivial"]["id_error_per_mesh"]] * 3
    assert verdict(CLAIMS, "regression_learned", m) == "fails"
    assert verdict(CLAIMS, "geonew_lower_ood_error", m) == "inconclusive"
    assert verdict(CLAIMS, "geonew_learned", m) == "pass"


def test_an_advantage_within_seed_noise_fails():
    m = copy.deepcopy(metrics())
    m["models"]["regression"]["ood_id_ratio"] = [1.1, 1.3, 1.15]
    assert verdict(CLAIMS, "geonew_smaller_ood_degradation", m) == "fails"


def test_checks_fail_when_exactness_is_lost():
    m = copy.deepcopy(metrics())
    m["models"]["geonew"] |= {
        "global_balance_max": 1e-2,
        "newton_converged_fraction": 0.9,
        "min_jacobian_eigenvalue": -1e-3,
    }
    assert verdict(CLAIMS, "geonew_global_balance", m) == "fails"
    assert verdict(CLAIMS, "geonew_newton_converges_everywhere", m) == "fails"
    assert verdict(CLAIMS, "geonew_flux_jacobian_positive_definite", m) == "fails"


def test_missing_or_unpaired_inputs_give_failing_claims():
    m = copy.deepcopy(metrics())
    m["models"]["regression"]["ood_error"] = [0.3, 0.3]
    del m["models"]["geonew"]["pou_max_error"]
    assert verdict(CLAIMS, "geonew_lower_ood_error", m) == "fails"
    assert verdict(CLAIMS, "geonew_partition_of_unity", m) == "fails"
