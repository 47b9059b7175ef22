"""CCDB's paper claims fail on the counterfactuals the paper denies."""

from __future__ import annotations

import copy

import pytest

from repro.papers.ccdb.claims import CLAIMS
from repro.reporting.claims import verdict


def entry(wga, unbiased, avg, weights=None):
    out = {
        "worst_group": wga,
        "unbiased": unbiased,
        "average": avg,
        "conflicting": unbiased,
        "aligned": [0.99] * 3,
    }
    if weights:
        conflicting, aligned, std = weights
        out |= {
            "weights_mean_conflicting": conflicting,
            "weights_mean_aligned": aligned,
            "weights_std": std,
            "weights_min": [0.01] * 3,
            "weights_mean": [1.0] * 3,
        }
    return out


def metrics():
    main = {
        "ratio": 0.95,
        "erm": entry([0.0, 0.05, 0.02], [0.80, 0.81, 0.79], [0.80, 0.81, 0.79]),
        "ccdb": entry(
            [0.30, 0.25, 0.28], [0.88, 0.87, 0.89], [0.88, 0.87, 0.89], ([14.0, 13.0, 15.0], [0.3] * 3, [4.0] * 3)
        ),
        "group_balanced": entry(
            [0.45, 0.46, 0.47], [0.90, 0.91, 0.90], [0.90, 0.91, 0.90], ([18.0] * 3, [0.1] * 3, [4.4] * 3)
        ),
    }
    no_bias = {
        "ratio": 0.1,
        "erm": entry([0.7] * 3, [0.96, 0.965, 0.962], [0.96, 0.965, 0.962]),
        "ccdb": entry(
            [0.7] * 3, [0.961, 0.963, 0.962], [0.961, 0.963, 0.962], ([1.0] * 3, [1.0] * 3, [0.05, 0.06, 0.05])
        ),
    }
    return {
        "learning": learning(),
        "main": "rho0.95",
        "no_bias": "rho0.1",
        "seeds": [0, 1, 2],
        "table_deviation": 0.0,
        "ratios": {"rho0.95": main, "rho0.1": no_bias},
    }


def learning(error=0.15, n=300):
    """Per-item test errors of classifiers that learned (15 % error) and of the class prior (90 %)."""
    model = [1.0] * int(error * n) + [0.0] * (n - int(error * n))
    return {"trivial": [1.0] * (9 * n // 10) + [0.0] * (n // 10), "erm": model, "ccdb": model, "group_balanced": model}


def test_claims_pass_on_the_papers_pattern():
    for claim in CLAIMS:
        assert verdict(CLAIMS, claim.id, metrics()) == "pass", claim.id


def with_erm_as(m, which, method="ccdb"):
    out = copy.deepcopy(m)
    keep = {k: v for k, v in out["ratios"][m[which]][method].items() if k.startswith("weights_")}
    out["ratios"][m[which]][method] = copy.deepcopy(out["ratios"][m[which]]["erm"]) | keep
    return out


@pytest.mark.counterfactual("ccdb", "ccdb_worst_group_beats_erm")
def test_erm_in_place_of_ccdb_fails_worst_group():
    assert verdict(CLAIMS, "ccdb_worst_group_beats_erm", with_erm_as(metrics(), "main")) == "fails"


@pytest.mark.counterfactual("ccdb", "ccdb_closer_to_oracle")
def test_erm_in_place_of_ccdb_fails_oracle_gap():
    assert verdict(CLAIMS, "ccdb_closer_to_oracle", with_erm_as(metrics(), "main")) == "fails"


@pytest.mark.counterfactual("ccdb", "ccdb_upweights_conflicting")
def test_uniform_weights_fail():
    m = metrics()
    m["ratios"]["rho0.95"]["ccdb"]["weights_mean_conflicting"] = [1.0, 0.98, 1.01]
    m["ratios"]["rho0.95"]["ccdb"]["weights_mean_aligned"] = [1.0] * 3
    assert verdict(CLAIMS, "ccdb_upweights_conflicting", m) == "fails"


@pytest.mark.counterfactual("ccdb", "ccdb_closer_to_oracle")
def test_erm_above_the_oracle_and_ccdb_below_both_fails():
    """The flaw the sign guard mends: with ERM above the oracle and CCDB below both, the ratio of two negative
    gaps was < 1 and passed."""
    m = metrics()
    main = m["ratios"]["rho0.95"]
    main["erm"]["unbiased"] = [0.92, 0.93, 0.92]
    main["group_balanced"]["unbiased"] = [0.90, 0.91, 0.90]
    main["ccdb"]["unbiased"] = [0.80, 0.81, 0.79]
    assert verdict(CLAIMS, "ccdb_closer_to_oracle", m) == "fails"
    main["ccdb"]["unbiased"] = [0.91, 0.92, 0.91]  # between the two: still no gap to close
    assert verdict(CLAIMS, "ccdb_closer_to_oracle", m) == "fails"


def test_a_classifier_that_did_not_learn_makes_the_claims_inconclusive():
    m = metrics()
    m["learning"]["ccdb"] = m["learning"]["trivial"]
    assert verdict(CLAIMS, "learn_ccdb", m) == "fails"
    assert verdict(CLAIMS, "ccdb_worst_group_beats_erm", m) == "inconclusive"
    assert verdict(CLAIMS, "ccdb_upweights_conflicting", m) == "pass"


def test_collapsed_weights_without_bias_fail():
    m = metrics()
    m["ratios"]["rho0.1"]["ccdb"]["weights_std"] = [2.0, 1.9, 2.1]
    assert verdict(CLAIMS, "ccdb_no_bias_uniform_weights", m) == "fails"


def test_accuracy_loss_without_bias_fails():
    m = metrics()
    m["ratios"]["rho0.1"]["ccdb"]["average"] = [0.90, 0.91, 0.90]
    assert verdict(CLAIMS, "ccdb_no_bias_matches_erm", m) == "fails"
