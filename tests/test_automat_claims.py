"""AutoMat's paper claims fail on counterfactual metrics (the feed-forward numbers in the loop's place)."""

import numpy as np
import pytest

from repro.papers.automat.claims import CLAIMS
from repro.reporting.claims import verdict

DOSES = [100.0] * 40 + [10000.0] * 40


def metrics(match_loop=None, match_ff=None, lattice_loop=None, lattice_ff=None, **override):
    rng = np.random.default_rng(0)
    ff = np.r_[rng.random(40) < 0.4, rng.random(40) < 0.9].astype(float)
    loop = np.r_[np.ones(40), ff[40:]]
    lat_ff = np.r_[rng.uniform(0.02, 0.06, 40), rng.uniform(0.0, 0.01, 40)]
    base = {
        "rerender_min_ncc": 1.0,
        "peak_fit_max_error": 0.01,
        "doses": [100.0, 10000.0],
        "per_image": {
            "dose": DOSES,
            "match_loop": (loop if match_loop is None else match_loop).tolist(),
            "match_ff": (ff if match_ff is None else match_ff).tolist(),
            "lattice_loop": (lat_ff * 0.5 if lattice_loop is None else lattice_loop).tolist(),
            "lattice_ff": (lat_ff if lattice_ff is None else lattice_ff).tolist(),
        },
        "bootstrap_resamples": 500,
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("automat", "automat_loop_more_accurate")
def test_feed_forward_matches_in_the_loops_place_fail():
    ff = np.asarray(metrics()["per_image"]["match_ff"])
    assert verdict(CLAIMS, "automat_loop_more_accurate", metrics(match_loop=ff)) == "fails"


@pytest.mark.counterfactual("automat", "automat_loop_lower_lattice_error")
def test_equal_lattice_errors_fail():
    lat = np.asarray(metrics()["per_image"]["lattice_ff"])
    assert verdict(CLAIMS, "automat_loop_lower_lattice_error", metrics(lattice_loop=lat)) == "fails"


@pytest.mark.counterfactual("automat", "automat_gain_largest_at_low_dose")
def test_gain_only_at_high_dose_fails():
    ff = np.asarray(metrics()["per_image"]["match_ff"])
    loop = np.r_[ff[:40], np.ones(40)]
    assert verdict(CLAIMS, "automat_gain_largest_at_low_dose", metrics(match_loop=loop)) == "fails"


def test_broken_checks_and_missing_inputs_fail():
    assert verdict(CLAIMS, "automat_rerender_identity", metrics(rerender_min_ncc=0.99)) == "fails"
    assert verdict(CLAIMS, "automat_peak_fit_noiseless", metrics(peak_fit_max_error=0.2)) == "fails"
    assert verdict(CLAIMS, "automat_loop_more_accurate", metrics(per_image={})) == "fails"
