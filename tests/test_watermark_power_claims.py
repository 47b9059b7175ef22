"""Power-calibrated watermarking's paper claims fail on counterfactual metrics."""

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


@pytest.mark.counterfactual("watermark-power", "wm_distortion_grows_with_delta")
def test_distortion_falling_with_delta_fails():
    assert verdict(CLAIMS, "wm_distortion_grows_with_delta", metrics(kl_drops_with_delta=1)) == "fails"


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
