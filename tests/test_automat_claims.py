"""AutoMat's claims fail on counterfactual metrics (the feed-forward numbers in the loop's place), and its checks
fail when the piece they check is broken."""

import numpy as np
import pytest

from repro.papers.automat.claims import CLAIMS
from repro.reporting.claims import verdict

DOSES = [100.0] * 40 + [10000.0] * 40


def metrics(match_loop=None, match_ff=None, lattice_loop=None, lattice_ff=None, energy_loop=None, **override):
    rng = np.random.default_rng(0)
    ff = np.r_[rng.random(40) < 0.4, rng.random(40) < 0.9].astype(float)
    loop = np.r_[np.ones(40), ff[40:]]
    lat_ff = np.r_[rng.uniform(0.02, 0.06, 40), rng.uniform(0.0, 0.01, 40)]
    en_ff = rng.uniform(0.1, 1.0, 80)
    en_ff[:3] = np.nan  # images without a reconstruction have no energy
    base = {
        "rerender_min_ncc": 1.0,
        "peak_fit_max_error": 0.01,
        "verifier_vs_generator_ncc": [0.99, 0.995],
        "noiseless_accuracy": 0.9,
        "doses": [100.0, 10000.0],
        "per_image": {
            "dose": DOSES,
            "match_loop": (loop if match_loop is None else match_loop).tolist(),
            "match_ff": (ff if match_ff is None else match_ff).tolist(),
            "lattice_error_loop": (lat_ff * 0.5 if lattice_loop is None else lattice_loop).tolist(),
            "lattice_error_ff": (lat_ff if lattice_ff is None else lattice_ff).tolist(),
            "energy_error_loop": (en_ff * 0.5 if energy_loop is None else energy_loop).tolist(),
            "energy_error_ff": en_ff.tolist(),
        },
        "bootstrap_resamples": 500,
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert {c.id: verdict(CLAIMS, c.id, metrics()) for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


@pytest.mark.counterfactual("automat", "automat_loop_more_accurate")
def test_feed_forward_matches_in_the_loops_place_fail():
    ff = np.asarray(metrics()["per_image"]["match_ff"])
    assert verdict(CLAIMS, "automat_loop_more_accurate", metrics(match_loop=ff)) == "fails"


@pytest.mark.counterfactual("automat", "automat_loop_lower_lattice_error")
def test_equal_lattice_errors_fail():
    lat = np.asarray(metrics()["per_image"]["lattice_error_ff"])
    assert verdict(CLAIMS, "automat_loop_lower_lattice_error", metrics(lattice_loop=lat)) == "fails"


@pytest.mark.counterfactual("automat", "automat_loop_lower_formation_error")
def test_larger_loop_energy_errors_fail():
    en = np.asarray(metrics()["per_image"]["energy_error_ff"])
    assert verdict(CLAIMS, "automat_loop_lower_formation_error", metrics(energy_loop=en * 1.5)) == "fails"


@pytest.mark.counterfactual("automat", "automat_gain_largest_at_low_dose")
def test_gain_only_at_high_dose_fails():
    ff = np.asarray(metrics()["per_image"]["match_ff"])
    loop = np.r_[ff[:40], np.ones(40)]
    assert verdict(CLAIMS, "automat_gain_largest_at_low_dose", metrics(match_loop=loop)) == "fails"


def test_broken_checks_and_missing_inputs_fail():
    assert verdict(CLAIMS, "automat_rerender_identity", metrics(rerender_min_ncc=0.99)) == "fails"
    assert verdict(CLAIMS, "automat_peak_fit_noiseless", metrics(peak_fit_max_error=0.2)) == "fails"
    # the generator used as the verifier: its image of a truth is the generator's own
    same = metrics(verifier_vs_generator_ncc=[1.0, 1.0])
    assert verdict(CLAIMS, "automat_verifier_is_another_model", same) == "fails"
    assert verdict(CLAIMS, "automat_verifier_accepts_truths", metrics(verifier_vs_generator_ncc=[0.7, 0.99])) == "fails"
    assert verdict(CLAIMS, "automat_noiseless_reconstruction", metrics(noiseless_accuracy=0.5)) == "fails"
    assert verdict(CLAIMS, "automat_loop_more_accurate", metrics(per_image={})) == "fails"
