"""GPO's paper claims fail on counterfactual metrics (the baseline's numbers or quadratic timings in GPO's place)."""

import numpy as np
import pytest

from repro.papers.gpo.claims import CLAIMS
from repro.reporting.claims import verdict


def errors(gpo_lo, fno_lo, gpo_hi=None, irregular=None, trivial=0.5, n=20):
    """Per-sample rel-L2 of GPO, FNO and the trivial predictor (the mean field or persistence: 0.5, which both
    models beat by far, so their learning checks pass)."""
    rng = np.random.default_rng(0)
    noise = 1 + 0.02 * rng.standard_normal(n)
    gpo = {"lo": (gpo_lo * noise).tolist(), "hi": ((gpo_hi or gpo_lo) * noise).tolist()}
    gpo["irregular"] = ((irregular or gpo_lo) * noise).tolist()
    gpo["full_grid_at_subset"] = (gpo_lo * noise).tolist()
    fno = {"lo": (fno_lo * noise).tolist(), "hi": (fno_lo * noise).tolist()}
    return {"gpo": gpo, "fno": fno, "trivial": {"lo": (trivial * noise).tolist()}}


def timing(slope):
    return {"slope": slope, "bootstrap": list(slope + np.random.default_rng(1).normal(0, 0.02, 200))}


def metrics(**override):
    base = {
        "relative_l2": {"darcy": errors(0.1, 0.1), "ns": errors(0.1, 0.09)},
        "grids": {"darcy": {"lo": 16, "hi": 32}, "ns": {"lo": 32, "hi": 64}},
        "forward_time_slope": {"gpo": 1.0, "galerkin": 1.0, "softmax": 2.0},
        "forward_time": {"gpo": timing(1.0), "galerkin": timing(1.0), "softmax": timing(2.0)},
        "checks": {
            t: {"decoder_max_abs_diff": 0.0, "measurement_permutation_max_abs_diff": 1e-7} for t in ("darcy", "ns")
        },
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


def test_quadratic_forward_time_fails_the_check():
    assert verdict(CLAIMS, "gpo_near_linear_forward_time", metrics(forward_time={"gpo": timing(2.0)})) == "fails"


def test_a_model_no_better_than_its_trivial_predictor_makes_its_claims_inconclusive():
    m = metrics(relative_l2={"darcy": errors(0.1, 0.1), "ns": errors(0.2, 0.09, trivial=0.21)})
    assert verdict(CLAIMS, "learn_ns_gpo", m) == "fails"
    assert verdict(CLAIMS, "gpo_zero_shot_resolution_ns", m) == "inconclusive"
    assert verdict(CLAIMS, "gpo_zero_shot_resolution_darcy", m) == "pass"


@pytest.mark.counterfactual("gpo", "gpo_competitive_with_fno_ns")
def test_twice_fno_error_on_navier_stokes_fails():
    m = metrics(relative_l2={"darcy": errors(0.1, 0.1), "ns": errors(0.2, 0.09)})
    assert verdict(CLAIMS, "gpo_competitive_with_fno_ns", m) == "fails"


@pytest.mark.counterfactual("gpo", "gpo_competitive_with_fno_darcy")
def test_twice_fno_error_on_darcy_fails():
    m = metrics(relative_l2={"darcy": errors(0.2, 0.1), "ns": errors(0.1, 0.09)})
    assert verdict(CLAIMS, "gpo_competitive_with_fno_darcy", m) == "fails"


@pytest.mark.counterfactual("gpo", "gpo_zero_shot_resolution_ns")
def test_error_blowing_up_on_the_fine_navier_stokes_grid_fails():
    m = metrics(relative_l2={"darcy": errors(0.1, 0.1), "ns": errors(0.1, 0.09, gpo_hi=0.5)})
    assert verdict(CLAIMS, "gpo_zero_shot_resolution_ns", m) == "fails"


@pytest.mark.counterfactual("gpo", "gpo_zero_shot_resolution_darcy")
def test_error_blowing_up_on_the_fine_darcy_grid_fails():
    m = metrics(relative_l2={"darcy": errors(0.1, 0.1, gpo_hi=0.3), "ns": errors(0.1, 0.09)})
    assert verdict(CLAIMS, "gpo_zero_shot_resolution_darcy", m) == "fails"


@pytest.mark.counterfactual("gpo", "gpo_irregular_points_ns")
def test_error_blowing_up_on_point_subsets_fails():
    m = metrics(relative_l2={"darcy": errors(0.1, 0.1), "ns": errors(0.1, 0.09, irregular=0.4)})
    assert verdict(CLAIMS, "gpo_irregular_points_ns", m) == "fails"


def test_checks_fail_when_the_property_is_broken_or_missing():
    broken = metrics(
        checks={t: {"decoder_max_abs_diff": 0.1, "measurement_permutation_max_abs_diff": 0.1} for t in ("darcy", "ns")}
    )
    assert verdict(CLAIMS, "gpo_decoder_resolution_consistent", broken) == "fails"
    assert verdict(CLAIMS, "gpo_measurement_permutation_invariant", broken) == "fails"
    missing = metrics()
    del missing["relative_l2"]
    # the errors feed the learning checks too: a claim whose models cannot be shown to have learned says nothing
    assert verdict(CLAIMS, "learn_ns_gpo", missing) == "fails"
    assert verdict(CLAIMS, "gpo_competitive_with_fno_ns", missing) == "inconclusive"
