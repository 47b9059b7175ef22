"""cgmt-erm's paper claims fail on counterfactual metrics (the prediction the paper denies in its place)."""

import copy

import numpy as np
import pytest

from repro.papers.cgmt_erm.claims import CLAIMS
from repro.reporting.claims import verdict

LOSSES = ("square", "logistic")
TOL = 0.0136


def record(design, loss, reg="l2", ratio=2, **ks):
    """A record at the main p and ratio; KS values in units of the DKW tolerance."""
    base = {"convolution": 0.5, "gaussian": 0.5, "gaussian_mixture": 0.5, "fixed_point": 0.5}
    base |= {"gaussian": 5.0, "fixed_point": 0.8} if design in ("mixture", "localized") else {}
    base |= ks
    return {
        "design": design,
        "loss": loss,
        "reg": reg,
        "ratio": ratio,
        "p": 100,
        "ks_tolerance": TOL / 2,
        "ks_replicates": TOL / 2,
        "test_error": 0.10,
        "test_error_fixed_point": 0.105,
        "theta_norm": 1.0,
        **{f"ks_{k}": v * TOL for k, v in base.items()},
    }


def metrics():
    """Metrics shaped as the evaluate stage writes them, supporting every claim."""
    records = [record(d, loss) for d in ("mixture", "iid_t", "relu_features", "localized") for loss in LOSSES]
    for design in ("mixture", "localized"):
        records += [
            record(design, "logistic", "pseudo_huber") | {"test_error": 0.100},
            record(design, "logistic", "surrogate") | {"test_error": 0.101},
        ]
    next(r for r in records if r["design"] == "localized" and r["loss"] == "logistic" and r["reg"] == "l2")[
        "test_error"
    ] = 0.12
    ps = [50, 100, 200]
    sweep = [
        {"p": p, "loss": loss, "fold_ks": (0.3 * p**-0.5 * np.array([1.0, 1.05, 0.95, 1.02, 0.98])).tolist()}
        for p in ps
        for loss in LOSSES
    ]
    return {
        "records": records,
        "fixed_point_sweep": sweep,
        "ridge_check": {"mahalanobis": 40.0, "chi2_999": 86.7, "cov_error_ratio": 1.0},
        "p_main": 100,
        "main_ratio": 2,
        "huber": {"designs": ["mixture", "localized"], "loss": "logistic", "rel_tol": 0.05},
        "test_error_tol": 0.02,
        "learning": {d: learned_errors() for d in ("mixture", "iid_t", "relu_features", "localized")},
    }


def learned_errors(model_rate=0.1, n=400):
    """Per-item 0/1 errors of a fit that learned (10 % error) and of the class prior (50 %)."""
    rng = np.random.default_rng(0)
    return {"model": (rng.random(n) < model_rate).astype(float).tolist(), "trivial": [0.0, 1.0] * (n // 2)}


def with_ks(m, design, **ks):
    out = copy.deepcopy(m)
    for r in out["records"]:
        if r["design"] == design and r["reg"] == "l2":
            r.update({f"ks_{k}": v * TOL for k, v in ks.items()})
    return out


def test_every_claim_passes_on_metrics_that_support_it():
    failing = [c.id for c in CLAIMS if verdict(CLAIMS, c.id, metrics()) != "pass"]
    assert not failing


@pytest.mark.counterfactual("cgmt-erm", "convolution_matches_mixture")
@pytest.mark.counterfactual("cgmt-erm", "convolution_matches_iid_t")
@pytest.mark.counterfactual("cgmt-erm", "convolution_matches_relu_features")
@pytest.mark.counterfactual("cgmt-erm", "convolution_matches_localized")
@pytest.mark.parametrize("design", ["mixture", "iid_t", "relu_features", "localized"])
def test_convolution_as_far_as_the_gaussian_fails(design):
    assert verdict(CLAIMS, f"convolution_matches_{design}", with_ks(metrics(), design, convolution=5.0)) == "fails"


@pytest.mark.counterfactual("cgmt-erm", "gaussian_fails_mixture")
@pytest.mark.counterfactual("cgmt-erm", "gaussian_fails_localized")
@pytest.mark.parametrize("design", ["mixture", "localized"])
def test_gaussian_as_close_as_the_convolution_fails(design):
    assert verdict(CLAIMS, f"gaussian_fails_{design}", with_ks(metrics(), design, gaussian=0.5)) == "fails"


@pytest.mark.counterfactual("cgmt-erm", "gaussian_mixture_equivalent_fits_mixture")
def test_gaussian_mixture_as_far_as_the_gaussian_fails():
    m = with_ks(metrics(), "mixture", gaussian_mixture=5.0)
    assert verdict(CLAIMS, "gaussian_mixture_equivalent_fits_mixture", m) == "fails"


@pytest.mark.counterfactual("cgmt-erm", "universality_holds_iid_t")
@pytest.mark.counterfactual("cgmt-erm", "universality_holds_relu_features")
@pytest.mark.parametrize("design", ["iid_t", "relu_features"])
def test_gaussian_breaking_down_on_a_delocalised_design_fails(design):
    assert verdict(CLAIMS, f"universality_holds_{design}", with_ks(metrics(), design, gaussian=5.0)) == "fails"


@pytest.mark.counterfactual("cgmt-erm", "fixed_point_rate_mixture")
@pytest.mark.parametrize("exponent", [0.0, -1.5])
def test_ks_not_falling_at_the_theory_rate_fails(exponent):
    m = metrics()
    for r in m["fixed_point_sweep"]:
        r["fold_ks"] = (0.3 * r["p"] ** exponent * np.array([1.0, 1.05, 0.95, 1.02, 0.98])).tolist()
    assert verdict(CLAIMS, "fixed_point_rate_mixture", m) == "fails"


def test_fixed_point_rate_needs_its_whole_interval_inside():
    m = metrics()
    rng = np.random.default_rng(0)
    for r in m["fixed_point_sweep"]:
        r["fold_ks"] = (0.3 * r["p"] ** -0.5 * np.exp(rng.normal(0, 0.8, 5))).tolist()
    assert verdict(CLAIMS, "fixed_point_rate_mixture", m) == "fails"


@pytest.mark.counterfactual("cgmt-erm", "fixed_point_test_error_mixture")
def test_fixed_point_test_error_off_by_more_than_the_tolerance_fails():
    m = metrics()
    m["records"][0]["test_error_fixed_point"] = 0.2
    assert verdict(CLAIMS, "fixed_point_test_error_mixture", m) == "fails"


@pytest.mark.counterfactual("cgmt-erm", "quadratic_surrogate_pseudo_huber")
def test_surrogate_as_far_as_plain_ridge_fails():
    m = metrics()
    next(r for r in m["records"] if r["design"] == "localized" and r["reg"] == "surrogate")["test_error"] = 0.12
    assert verdict(CLAIMS, "quadratic_surrogate_pseudo_huber", m) == "fails"


@pytest.mark.counterfactual("cgmt-erm", "surrogate_gradient_term_matters_localized")
def test_plain_ridge_as_close_as_the_surrogate_fails():
    m = metrics()
    next(r for r in m["records"] if r["design"] == "localized" and r["loss"] == "logistic" and r["reg"] == "l2")[
        "test_error"
    ] = 0.101
    assert verdict(CLAIMS, "surrogate_gradient_term_matters_localized", m) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    m = metrics()
    m["records"] = [r for r in m["records"] if r["design"] != "iid_t"]
    m["fixed_point_sweep"][0]["fold_ks"][0] = float("nan")
    assert verdict(CLAIMS, "convolution_matches_iid_t", m) == "fails"
    assert verdict(CLAIMS, "fixed_point_rate_mixture", m) == "fails"
    m["ridge_check"] = None
    assert verdict(CLAIMS, "ridge_mean_exact", m) == "fails"


def test_a_fit_no_better_than_the_class_prior_makes_its_claims_inconclusive():
    m = metrics()
    m["learning"]["localized"] = learned_errors(model_rate=0.5)
    assert verdict(CLAIMS, "learn_erm_localized", m) == "fails"
    assert verdict(CLAIMS, "gaussian_fails_localized", m) == "inconclusive"
    assert verdict(CLAIMS, "gaussian_fails_mixture", m) == "pass"
