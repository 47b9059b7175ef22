"""DISSOLVR's paper claims fail on counterfactual metrics (a baseline's errors in DISSOLVR's place)."""

import numpy as np
import pytest

from repro.papers.dissolvr.claims import CLAIMS
from repro.reporting.claims import verdict


def squared_errors(scale: float, n: int = 120, seed: int = 0) -> list[float]:
    return (np.random.default_rng(seed).normal(scale=scale, size=n) ** 2).tolist()


def metrics(**override):
    """Metrics shaped as the evaluate stage writes them, with DISSOLVR ahead everywhere."""
    base = {
        "primary": {
            "squared_errors": {
                "dissolvr": squared_errors(0.55),
                "esol_refit": squared_errors(0.95, seed=1),
                "rf_morgan": squared_errors(1.1, seed=2),
                "gbm_rdkit": squared_errors(0.75, seed=3),
                "train_mean": squared_errors(2.0, seed=4),
            }
        },
        "relative_increase": {"dissolvr": [0.30, 0.50, 0.70, 0.25, 0.35], "rf_morgan": [0.40, 0.70, 0.85, 0.30, 0.40]},
        "shap_additivity_max_error": 1e-14,
        "bootstrap_resamples": 500,
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("dissolvr", "dissolvr_beats_esol")
def test_esol_errors_in_dissolvrs_place_fail():
    sq = metrics()["primary"]["squared_errors"]
    swapped = {"squared_errors": sq | {"dissolvr": sq["esol_refit"], "esol_refit": sq["dissolvr"]}}
    assert verdict(CLAIMS, "dissolvr_beats_esol", metrics(primary=swapped)) == "fails"


@pytest.mark.counterfactual("dissolvr", "dissolvr_beats_rf_morgan")
def test_equal_errors_to_the_random_forest_fail():
    sq = metrics()["primary"]["squared_errors"]
    tied = {"squared_errors": sq | {"dissolvr": sq["rf_morgan"]}}
    assert verdict(CLAIMS, "dissolvr_beats_rf_morgan", metrics(primary=tied)) == "fails"


@pytest.mark.counterfactual("dissolvr", "dissolvr_scaffold_generalisation")
def test_larger_scaffold_penalty_than_the_random_forest_fails():
    rel = {"dissolvr": [0.5, 0.8, 0.9, 0.4, 0.5], "rf_morgan": [0.4, 0.7, 0.85, 0.3, 0.4]}
    assert verdict(CLAIMS, "dissolvr_scaffold_generalisation", metrics(relative_increase=rel)) == "fails"


def test_an_interval_straddling_zero_fails_the_scaffold_claim():
    rel = {"dissolvr": [0.3, 0.8, 0.6, 0.2, 0.5], "rf_morgan": [0.4, 0.7, 0.65, 0.3, 0.4]}
    assert verdict(CLAIMS, "dissolvr_scaffold_generalisation", metrics(relative_increase=rel)) == "fails"


@pytest.mark.counterfactual("dissolvr", "dissolvr_beats_gbm_rdkit")
def test_physical_blocks_that_add_nothing_fail_the_ablation():
    sq = metrics()["primary"]["squared_errors"]
    tied = {"squared_errors": sq | {"gbm_rdkit": sq["dissolvr"]}}
    assert verdict(CLAIMS, "dissolvr_beats_gbm_rdkit", metrics(primary=tied)) == "fails"


@pytest.mark.parametrize("model", ["dissolvr", "gbm_rdkit", "esol_refit", "rf_morgan"])
def test_a_model_no_better_than_the_training_mean_fails_its_learning_check(model):
    sq = metrics()["primary"]["squared_errors"]
    flat = {"squared_errors": sq | {model: (np.asarray(sq["train_mean"]) * 0.9).tolist()}}
    assert verdict(CLAIMS, f"learn_{model}", metrics(primary=flat)) == "fails"
    resting = [c.id for c in CLAIMS if f"learn_{model}" in (c.rests_on or ())]
    assert resting and all(verdict(CLAIMS, c, metrics(primary=flat)) == "inconclusive" for c in resting)


def test_broken_additivity_and_missing_inputs_fail():
    assert verdict(CLAIMS, "dissolvr_treeshap_additivity", metrics(shap_additivity_max_error=1e-3)) == "fails"
    # errors missing: the learning checks cannot pass, so the claim resting on them is inconclusive
    assert verdict(CLAIMS, "dissolvr_beats_esol", metrics(primary={})) == "inconclusive"
    sq = metrics()["primary"]["squared_errors"]
    nan_esol = {"squared_errors": sq | {"esol_refit": [np.nan] * len(sq["esol_refit"])}}
    assert verdict(CLAIMS, "learn_esol_refit", metrics(primary=nan_esol)) == "fails"
    nan = metrics()["relative_increase"] | {"dissolvr": [np.nan] * 5}
    assert verdict(CLAIMS, "dissolvr_scaffold_generalisation", metrics(relative_increase=nan)) == "fails"
