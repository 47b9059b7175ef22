"""DDG-SFDA's paper claims fail on counterfactual metrics (a baseline's numbers in the method's place)."""

import numpy as np
import pytest

from repro.papers.sfda_regression.claims import CLAIMS
from repro.reporting.claims import verdict


def metrics():
    """Metrics shaped as the evaluate stage writes them, with DDG-SFDA ahead everywhere."""
    rows = {
        "ddg": {"mae": [10.0, 10.5, 10.2], "compactness": [0.3, 0.32, 0.31]},
        "ddg_no_aux": {"mae": [10.4, 10.9, 10.6], "compactness": [0.5, 0.52, 0.5]},
        "ddg_no_weight": {"mae": [10.6, 11.0, 10.9], "compactness": [0.3, 0.33, 0.31]},
        "tasfar": {"mae": [11.6, 12.0, 11.9], "compactness": [0.4, 0.43, 0.41]},
        "source_only": {"mae": [14.0, 14.2, 14.5], "compactness": [0.5, 0.55, 0.52]},
        "self_training": {"mae": [12.0, 12.5, 12.2], "compactness": [0.4, 0.41, 0.4]},
        "feature_alignment": {"mae": [13.0, 13.1, 13.3], "compactness": [0.45, 0.46, 0.44]},
    }
    return {
        "learning": learned(),
        "transfers": {"rotation_noise": {"methods": rows}},
        "claim_transfer": "rotation_noise",
        "checks": {"histogram_max_sum_error": 1e-7, "histogram_min_value": 0.0, "label_max_range_violation": -0.02},
        "same_domain_relative_change": [0.01, -0.02, 0.03],
    }


def learned(n=200):
    """Per-item absolute errors of models that learned (10 degrees) and of the source-label mean (30)."""
    rng = np.random.default_rng(0)
    model = np.abs(rng.normal(0, 12.5, n)).tolist()
    methods = ("source_only", "self_training", "feature_alignment", "tasfar", "ddg", "ddg_no_aux", "ddg_no_weight")
    return {"trivial": rng.uniform(0, 60, n).tolist()} | {m: model for m in methods}


def replace(m, method, other):
    rows = m["transfers"]["rotation_noise"]["methods"]
    rows[method] = rows[other]
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("sfda-regression", "sfda_beats_source_only")
def test_source_only_numbers_in_place_of_the_method_fail():
    assert verdict(CLAIMS, "sfda_beats_source_only", replace(metrics(), "ddg", "source_only")) == "fails"


@pytest.mark.counterfactual("sfda-regression", "sfda_not_worse_than_self_training")
def test_worse_than_self_training_fails():
    m = metrics()
    m["transfers"]["rotation_noise"]["methods"]["ddg"]["mae"] = [12.5, 13.0, 12.8]
    assert verdict(CLAIMS, "sfda_not_worse_than_self_training", m) == "fails"


@pytest.mark.counterfactual("sfda-regression", "sfda_beats_feature_alignment")
def test_feature_alignment_numbers_in_place_fail():
    m = replace(metrics(), "ddg", "feature_alignment")
    assert verdict(CLAIMS, "sfda_beats_feature_alignment", m) == "fails"


@pytest.mark.counterfactual("sfda-regression", "sfda_aux_head_compacts_features")
def test_no_aux_head_as_compact_fails():
    assert verdict(CLAIMS, "sfda_aux_head_compacts_features", replace(metrics(), "ddg", "ddg_no_aux")) == "fails"


@pytest.mark.counterfactual("sfda-regression", "sfda_beats_tasfar")
def test_tasfar_numbers_in_place_fail():
    assert verdict(CLAIMS, "sfda_beats_tasfar", replace(metrics(), "ddg", "tasfar")) == "fails"


@pytest.mark.counterfactual("sfda-regression", "sfda_entropy_weighting_helps")
def test_unweighted_ablation_as_good_fails():
    assert verdict(CLAIMS, "sfda_entropy_weighting_helps", replace(metrics(), "ddg", "ddg_no_weight")) == "fails"


@pytest.mark.counterfactual("sfda-regression", "sfda_aux_head_helps")
def test_no_aux_head_ablation_as_accurate_fails():
    assert verdict(CLAIMS, "sfda_aux_head_helps", replace(metrics(), "ddg", "ddg_no_aux")) == "fails"


def test_a_model_no_better_than_the_label_mean_makes_its_claims_inconclusive():
    m = metrics()
    m["learning"]["tasfar"] = m["learning"]["trivial"]
    assert verdict(CLAIMS, "sfda_beats_tasfar", m) == "inconclusive"
    assert verdict(CLAIMS, "sfda_beats_source_only", m) == "pass"


def test_checks_fail_on_broken_histograms_and_collapse():
    m = metrics()
    m["checks"]["histogram_max_sum_error"] = 0.1
    m["same_domain_relative_change"] = [0.5, 0.4, 0.6]
    assert verdict(CLAIMS, "sfda_histograms_are_distributions", m) == "fails"
    assert verdict(CLAIMS, "sfda_same_domain_no_collapse", m) == "fails"


def test_histogram_checks_and_same_domain_change_from_runs():
    import numpy as np

    from repro.papers.sfda_regression.evaluate import histogram_checks

    runs = {
        "t/ddg/0/histograms": np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]),
        "t/ddg/0/labels": np.array([0.2, 0.9]),
    }
    c = histogram_checks(runs, ["t/ddg/0"], 3)
    assert c["histogram_max_sum_error"] == pytest.approx(0.0)
    assert c["histogram_min_value"] == 0.0
    # bin centres 1/6 .. 5/6: 0.9 lies 0.9 - 5/6 beyond the last
    assert c["label_max_range_violation"] == pytest.approx(0.9 - 5.0 / 6.0)
