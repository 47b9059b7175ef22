"""LWE paper claims fail on counterfactual metrics the paper denies."""

import pytest

from repro.papers.lwe.claims import CLAIMS
from repro.reporting.claims import verdict


def fit(value, low, high):
    return {"value": value, "low": low, "high": high, "n": 1000}


def metrics(**override):
    """Metrics shaped as the evaluate stage writes them, supporting every claim."""
    base = {
        "identities": {
            "generator_max_mismatch": 0,
            "error_max_over_sigma": 3.3,
            "reduction_max_mismatch": 0,
            "reduced_error_std_ratio": 0.98,
        },
        "column_spearman": -0.95,
        "cool_recovery": {"stepwise": [1.0] * 10, "per_column": [1.0, 0.0] * 5},
        "learning": {"model": [1.0, 0.5, 2.0, 3.0] * 5, "trivial": [9.5] * 20},
        "power_law": {
            "slope_log_n": fit(-0.5, -0.8, -0.2),
            "slope_log_r": fit(-0.3, -0.5, -0.1),
            "slope_log_r_fixed_budget": fit(-0.2, -0.4, -0.05),
            "log_attempts_model_best": [1.0, 2.0, 1.5, 0.5],
            "log_attempts_exhaustive": [4.0, 5.0, 4.5, 3.0],
        },
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS if "smoke" in c.scales)
    full = [c for c in CLAIMS if c.scales == ("full",) and c.id != "lwe_highest_weight_recovered_n256"]
    assert all(verdict(CLAIMS, c.id, metrics(), scale="full") == "pass" for c in full)


def test_a_distinguisher_ranking_bits_at_random_makes_the_model_claims_inconclusive():
    m = metrics(learning={"model": [9.0, 10.0] * 10, "trivial": [9.5] * 20})
    assert verdict(CLAIMS, "learn_distinguisher", m) == "fails"
    assert verdict(CLAIMS, "lwe_model_beats_exhaustive", m) == "inconclusive"
    assert verdict(CLAIMS, "lwe_stepwise_beats_per_column", m) == "pass"


@pytest.mark.counterfactual("lwe", "lwe_highest_weight_recovered_n256")
def test_prior_attack_weight_fails_the_full_scale_number():
    claim = "lwe_highest_weight_recovered_n256"
    assert verdict(CLAIMS, claim, metrics(recovered={"highest_h": 68.0}), scale="full") == "pass"
    assert verdict(CLAIMS, claim, metrics(recovered={"highest_h": 3.0}), scale="full") == "fails"


@pytest.mark.counterfactual("lwe", "lwe_cruel_cool_split")
def test_unreduced_uniform_columns_fail_the_split():
    assert verdict(CLAIMS, "lwe_cruel_cool_split", metrics(column_spearman=0.05), scale="full") == "fails"


@pytest.mark.counterfactual("lwe", "lwe_stepwise_recovers_cool_bits")
def test_per_column_success_in_stepwise_place_fails():
    rows = {"stepwise": [1.0, 0.0] * 5, "per_column": [1.0, 0.0] * 5}
    assert verdict(CLAIMS, "lwe_stepwise_recovers_cool_bits", metrics(cool_recovery=rows)) == "fails"


@pytest.mark.counterfactual("lwe", "lwe_stepwise_beats_per_column")
def test_stepwise_no_better_than_per_column_fails():
    rows = {"stepwise": [1.0, 0.0] * 5, "per_column": [1.0, 0.0] * 5}
    assert verdict(CLAIMS, "lwe_stepwise_beats_per_column", metrics(cool_recovery=rows)) == "fails"


@pytest.mark.counterfactual("lwe", "lwe_attempts_fall_with_dataset_size")
def test_flat_attempts_in_n_fail():
    law = metrics()["power_law"] | {"slope_log_n": fit(-0.1, -0.4, 0.2)}
    assert verdict(CLAIMS, "lwe_attempts_fall_with_dataset_size", metrics(power_law=law)) == "fails"


@pytest.mark.counterfactual("lwe", "lwe_attempts_fall_with_repetition")
def test_repetition_without_effect_at_a_fixed_budget_fails():
    """The confound the mended claim removes: the pooled fit's r slope falls (more epochs) while, at a fixed
    number of examples seen, repeating fewer examples does not help."""
    law = metrics()["power_law"] | {"slope_log_r_fixed_budget": fit(0.05, -0.1, 0.2)}
    assert verdict(CLAIMS, "lwe_attempts_fall_with_repetition", metrics(power_law=law)) == "fails"


def test_fixed_budget_slope_compares_points_of_equal_budget_only():
    import numpy as np

    from repro.papers.lwe.evaluate import fixed_budget_slope

    log_r = np.log([1, 2, 1, 2, 4, 1])
    budgets = np.array([1000, 2000, 2000, 4000, 4000, 4000])
    # log attempts fall by 0.5 per unit log r within each budget, whatever the budgets' own levels
    level = {1000: 9.0, 2000: 5.0, 4000: 1.0}
    att = np.array([[level[b] - 0.5 * r] * 6 for b, r in zip(budgets, log_r)])
    out = fixed_budget_slope(att, log_r, budgets, n_boot=100)
    assert out["value"] == pytest.approx(-0.5) and out["points"] == 5


@pytest.mark.counterfactual("lwe", "lwe_model_beats_exhaustive")
def test_model_ranking_no_better_than_exhaustive_fails():
    law = metrics()["power_law"]
    law = law | {"log_attempts_model_best": law["log_attempts_exhaustive"]}
    assert verdict(CLAIMS, "lwe_model_beats_exhaustive", metrics(power_law=law)) == "fails"


def test_a_generator_mismatch_fails_the_identity():
    ids = metrics()["identities"] | {"generator_max_mismatch": 1}
    assert verdict(CLAIMS, "lwe_generator_identity", metrics(identities=ids)) == "fails"
    wide = metrics()["identities"] | {"error_max_over_sigma": 7.0}
    assert verdict(CLAIMS, "lwe_generator_identity", metrics(identities=wide)) == "fails"


def test_missing_inputs_give_failing_claims():
    broken = metrics()
    del broken["power_law"]
    assert verdict(CLAIMS, "lwe_attempts_fall_with_repetition", broken) == "fails"
    assert verdict(CLAIMS, "lwe_model_beats_exhaustive", broken) == "fails"
