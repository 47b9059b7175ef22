"""GeoCoupling's claims pass on metrics that support them, fail on counterfactuals the paper denies, and are
inconclusive when a generator did not learn."""

import copy

import numpy as np
import pytest

from repro.papers.geocoupling.claims import CLAIMS
from repro.reporting.claims import verdict


def samples(valid_trained: float, valid_untrained: float, n: int = 300) -> dict:
    k, j = int(valid_trained * n), int(valid_untrained * n)
    return {"trained": {"valid": [1.0] * k + [0.0] * (n - k)}, "untrained": {"valid": [1.0] * j + [0.0] * (n - j)}}


def metrics():
    """Metrics shaped as evaluate writes them: generators that learned, the learned coupling ahead and
    structure-leading."""
    scores = {
        "synchronous": {"consistency": [0.05, 0.06, 0.05], "validity": [0.60, 0.62, 0.61],
                        "structure_diversity": [2.80, 2.79, 2.81]},
        "random": {"consistency": [0.06, 0.05, 0.06], "validity": [0.61, 0.60, 0.62],
                   "structure_diversity": [2.78, 2.80, 2.79]},
        "learned": {"consistency": [0.09, 0.10, 0.09], "validity": [0.70, 0.71, 0.69],
                    "structure_diversity": [2.80, 2.78, 2.81]},
    }  # fmt: skip
    return {
        "bootstrap_resamples": 500,
        "samples": {c: samples(0.65, 0.05) for c in scores},
        "predictor_log_loss": {"predictor": [0.5, 0.6, 0.55] * 50, "prior": [0.7, 0.72, 0.71] * 50},
        "enumeration": {
            "walks": 2172,
            "walks_reference": 2172,
            "conformations": 272,
            "conformations_formula": 272,
            "brute_force_energy_max_error": 0.0,
            "brute_force_ground_state_max_error": 0.0,
        },
        "search_check": {
            "shortfall_in_standard_errors": 0.3,
            "grid_spread": 0.08,
            "grid_best_score": 0.57,
            "samples": 600,
        },  # fmt: skip
        "couplings_checks": {
            "curve_endpoint_error": 0.0,
            "curve_largest_decrease": 0.0,
            "time_pairs_beyond_jitter": -0.01,
        },
        "per_coupling": scores,
        "learned_alpha": [2.0, 2.5, 1.8],
    }


def with_learned(**values):
    m = copy.deepcopy(metrics())
    m["per_coupling"]["learned"].update(values)
    return m


def swapped(baseline: str):
    """The baseline's numbers in the learned coupling's place and the other way round."""
    m = metrics()
    pc = m["per_coupling"]
    pc["learned"], pc[baseline] = pc[baseline], pc["learned"]
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    assert {c.id: verdict(CLAIMS, c.id, metrics()) for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


def test_paper_claims_are_inconclusive_when_a_generator_did_not_learn():
    m = metrics()
    m["samples"]["random"] = samples(0.08, 0.05)
    assert verdict(CLAIMS, "geocoupling_random_generator_learned", m) == "fails"
    assert verdict(CLAIMS, "geocoupling_learned_beats_random", m) == "inconclusive"
    assert verdict(CLAIMS, "geocoupling_structure_leading", m) == "pass"  # rests on the learned generator only


@pytest.mark.counterfactual("geocoupling", "geocoupling_learned_beats_synchronous")
def test_synchronous_numbers_ahead_of_learned_fail():
    assert verdict(CLAIMS, "geocoupling_learned_beats_synchronous", swapped("synchronous")) == "fails"


@pytest.mark.counterfactual("geocoupling", "geocoupling_learned_beats_random")
def test_learned_no_better_than_random_within_noise_fails():
    m = with_learned(consistency=[0.07, 0.04, 0.065])
    assert verdict(CLAIMS, "geocoupling_learned_beats_random", m) == "fails"


@pytest.mark.counterfactual("geocoupling", "geocoupling_validity_vs_synchronous")
def test_lower_validity_than_synchronous_fails():
    assert verdict(CLAIMS, "geocoupling_validity_vs_synchronous", swapped("synchronous")) == "fails"


@pytest.mark.counterfactual("geocoupling", "geocoupling_validity_vs_random")
def test_validity_equal_to_random_within_noise_fails():
    m = with_learned(validity=[0.62, 0.58, 0.63])
    assert verdict(CLAIMS, "geocoupling_validity_vs_random", m) == "fails"


@pytest.mark.counterfactual("geocoupling", "geocoupling_diversity_vs_synchronous")
def test_collapsed_diversity_fails_against_synchronous():
    m = with_learned(structure_diversity=[2.2, 2.3, 2.25])
    assert verdict(CLAIMS, "geocoupling_diversity_vs_synchronous", m) == "fails"


@pytest.mark.counterfactual("geocoupling", "geocoupling_diversity_vs_random")
def test_collapsed_diversity_fails_against_random():
    m = with_learned(structure_diversity=[2.2, 2.3, 2.25])
    assert verdict(CLAIMS, "geocoupling_diversity_vs_random", m) == "fails"


@pytest.mark.counterfactual("geocoupling", "geocoupling_structure_leading")
def test_sequence_leading_curves_fail_structure_leading():
    m = metrics()
    m["learned_alpha"] = [0.5, 0.6, 0.4]
    assert verdict(CLAIMS, "geocoupling_structure_leading", m) == "fails"


def test_checks_fail_on_their_defects():
    m = metrics()
    m["search_check"]["shortfall_in_standard_errors"] = 3.0
    assert verdict(CLAIMS, "geocoupling_search_reaches_grid_optimum", m) == "fails"
    m["search_check"]["grid_spread"] = 0.01
    assert verdict(CLAIMS, "geocoupling_search_check_informative", m) == "fails"
    m["predictor_log_loss"]["predictor"] = m["predictor_log_loss"]["prior"]
    assert verdict(CLAIMS, "geocoupling_predictor_informative", m) == "fails"
    m["enumeration"]["walks"] = 2170
    assert verdict(CLAIMS, "geocoupling_enumeration_counts", m) == "fails"
    assert np.isfinite(m["search_check"]["grid_best_score"])
