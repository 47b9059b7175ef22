"""Power-calibrated watermarking's paper claims fail on counterfactual metrics."""

import numpy as np
import pytest

from repro.papers.watermark_power.claims import CLAIMS
from repro.reporting.claims import verdict


def cell(gamma, delta, t, emp, low, high, predicted, kl):
    return {
        "gamma": gamma,
        "delta": delta,
        "T": t,
        "empirical": {"rate": emp, "low": low, "high": high, "n": 200},
        "predicted": predicted,
        "kl_empirical": kl,
        "kl_gap": {"difference": 0.001, "low": -0.002, "high": 0.004, "n": 200},
    }


def heuristic(name, power, choice_power, kl, choice_kl):
    """One row of the evaluate stage's heuristic comparison (per-sequence KL lists)."""
    return {
        "name": name,
        "heuristic": [0.25, 2.0],
        "choice": [0.75, 3.0],
        "heuristic_power": {"rate": power, "low": power - 0.05, "high": min(power + 0.05, 1.0), "n": 200},
        "choice_power": {"rate": choice_power, "low": choice_power - 0.05, "high": min(choice_power + 0.05, 1.0)},
        "heuristic_kl": list(kl + 0.01 * np.sin(np.arange(50))),
        "choice_kl": list(choice_kl + 0.01 * np.cos(np.arange(50))),
    }


def metrics(**override):
    """Metrics shaped as the evaluate stage writes them, supporting every claim."""
    cells = [cell(0.25, 1.0, 50, 0.5, 0.43, 0.57, 0.52, 0.1), cell(0.25, 2.0, 50, 0.9, 0.85, 0.94, 0.91, 0.4)]
    base = {
        "kl_identity_error": 1e-15,
        "hash_same_key_equal": True,
        "hash_other_key_agreement": 0.5,
        "false_positive": [{"alpha": 0.05, "rate": 0.05, "low": 0.03, "high": 0.07}],
        "cells": cells,
        "power_drops_with_delta": 0,
        "power_drops_with_length": 0,
        "kl_drops_with_delta": 0,
        "entropy_power_gap": [0.1, 0.15, 0.12, 0.2],
        "calibration": [{"budget": 0.2, "choice": cells[0], "dominated_by": []}],
        "real_lm": {"cells": [cell(0.25, 1.0, 24, 0.5, 0.25, 0.75, 0.37, 0.1)]},
        "heuristics": [heuristic("kgw", 1.0, 1.0, 0.43, 0.24), heuristic("common", 0.66, 0.69, 0.106, 0.104)],
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert {c.id: verdict(CLAIMS, c.id, metrics()) for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


@pytest.mark.counterfactual("watermark-power", "wm_fpr_at_level")
def test_detector_firing_too_often_fails():
    fpr = [{"alpha": 0.05, "rate": 0.12, "low": 0.09, "high": 0.15}]
    assert verdict(CLAIMS, "wm_fpr_at_level", metrics(false_positive=fpr)) == "fails"


@pytest.mark.counterfactual("watermark-power", "wm_power_prediction")
def test_high_entropy_formula_overpredicting_fails():
    cells = [c | {"predicted": c["empirical"]["high"] + 0.05} for c in metrics()["cells"]]
    assert verdict(CLAIMS, "wm_power_prediction", metrics(cells=cells)) == "fails"


@pytest.mark.counterfactual("watermark-power", "wm_power_monotone")
def test_power_falling_with_delta_fails():
    assert verdict(CLAIMS, "wm_power_monotone", metrics(power_drops_with_delta=2)) == "fails"


def test_distortion_falling_with_delta_fails_the_check():
    assert verdict(CLAIMS, "wm_distortion_grows_with_delta", metrics(kl_drops_with_delta=1)) == "fails"


@pytest.mark.counterfactual("watermark-power", "wm_distortion_prediction")
def test_high_entropy_distortion_in_place_of_the_calibration_prediction_fails():
    """Predicting KL at p(G) = gamma misses low-entropy steps: the paired differences sit away from 0."""
    off = {"difference": 0.05, "low": 0.03, "high": 0.07, "n": 200}
    cells = [c | {"kl_gap": off} for c in metrics()["cells"]]
    assert verdict(CLAIMS, "wm_distortion_prediction", metrics(cells=cells)) == "fails"


@pytest.mark.counterfactual("watermark-power", "wm_calibrated_beats_heuristics")
def test_heuristics_already_on_the_front_fail():
    """When the calibrated choice is the heuristic itself (no saving), or saves distortion only by losing
    power, the claim fails."""
    same = [heuristic("kgw", 1.0, 1.0, 0.43, 0.43), heuristic("common", 0.66, 0.66, 0.106, 0.106)]
    assert verdict(CLAIMS, "wm_calibrated_beats_heuristics", metrics(heuristics=same)) == "fails"
    weaker = [heuristic("kgw", 1.0, 1.0, 0.43, 0.24), heuristic("common", 0.66, 0.40, 0.106, 0.06)]
    assert verdict(CLAIMS, "wm_calibrated_beats_heuristics", metrics(heuristics=weaker)) == "fails"


@pytest.mark.counterfactual("watermark-power", "wm_low_entropy_lowers_power")
def test_no_entropy_effect_fails():
    assert (
        verdict(CLAIMS, "wm_low_entropy_lowers_power", metrics(entropy_power_gap=[0.05, -0.04, 0.02, -0.03])) == "fails"
    )


@pytest.mark.counterfactual("watermark-power", "wm_calibrated_on_front")
def test_dominated_choice_fails():
    calibration = [{"budget": 0.2, "choice": metrics()["cells"][0], "dominated_by": [(0.5, 1.0)]}]
    assert verdict(CLAIMS, "wm_calibrated_on_front", metrics(calibration=calibration)) == "fails"


@pytest.mark.counterfactual("watermark-power", "wm_real_lm_power_prediction")
def test_real_lm_detection_at_the_unwatermarked_rate_fails():
    """The unwatermarked generations' detection rate (0 of 16) in place of the watermarked one."""
    negatives = cell(0.25, 1.0, 24, 0.0, 0.0, 0.21, 0.37, 0.0)
    assert verdict(CLAIMS, "wm_real_lm_power_prediction", metrics(real_lm={"cells": [negatives]})) == "fails"


def test_broken_identity_hash_and_missing_inputs_fail():
    assert verdict(CLAIMS, "wm_kl_identity", metrics(kl_identity_error=1e-6)) == "fails"
    assert verdict(CLAIMS, "wm_hash_deterministic", metrics(hash_same_key_equal=False)) == "fails"
    assert verdict(CLAIMS, "wm_power_prediction", metrics(cells=[])) == "fails"
    assert verdict(CLAIMS, "wm_fpr_at_level", {"false_positive": None}) == "fails"
    assert verdict(CLAIMS, "wm_real_lm_power_prediction", metrics(real_lm={"cells": []})) == "fails"


def test_heuristic_comparison_picks_the_least_kl_cell_at_the_heuristics_power():
    """evaluate.heuristic_comparison against a hand-built grid: the choice is the cheapest cell whose
    predicted power reaches the heuristic's, and its per-sequence KL is the exact KL along its generations."""
    from repro.papers.watermark_power.evaluate import heuristic_comparison, sequence_kl
    from repro.papers.watermark_power.theory import kl_per_step

    rng = np.random.default_rng(0)
    gammas, deltas = [0.25, 0.5], [1.0, 2.0]
    p_green = rng.uniform(0.1, 0.9, size=(2, 2, 30, 8))
    s = {"gammas": np.array(gammas), "deltas": np.array(deltas), "wm_p_green": p_green}
    predicted = {(0.25, 1.0): 0.5, (0.25, 2.0): 0.99, (0.5, 1.0): 0.6, (0.5, 2.0): 0.995}
    kl = {(0.25, 1.0): 0.1, (0.25, 2.0): 0.4, (0.5, 1.0): 0.11, (0.5, 2.0): 0.3}
    rows = [
        {"gamma": g, "delta": d, "T": 8, "predicted": predicted[g, d], "kl_predicted": kl[g, d], "empirical": {}}
        for g in gammas
        for d in deltas
    ]
    out = heuristic_comparison(s, rows, {"calibration_length": 8, "baselines": {"kgw": [0.25, 2.0], "h": [0.25, 1.0]}})
    assert [r["choice"] for r in out] == [[0.5, 2.0], [0.25, 1.0]]
    direct = kl_per_step(p_green[1, 1], 2.0).mean(axis=1)
    np.testing.assert_allclose(out[0]["choice_kl"], direct)
    np.testing.assert_allclose(sequence_kl(p_green[0, 0], 1.0), out[1]["heuristic_kl"])
