"""GeoCoupling's claims pass on metrics that support them and fail on counterfactuals the paper denies."""

import copy

import pytest

from repro.papers.geocoupling.claims import CLAIMS
from repro.reporting.claims import verdict


def metrics():
    """Metrics shaped as evaluate writes them, with the learned coupling ahead and structure-leading."""
    scores = {
        "synchronous": {"consistency": [0.10, 0.12, 0.11], "unique_pairs": [0.70, 0.71, 0.69]},
        "random": {"consistency": [0.12, 0.11, 0.13], "unique_pairs": [0.68, 0.70, 0.69]},
        "learned": {"consistency": [0.20, 0.22, 0.21], "unique_pairs": [0.72, 0.70, 0.71]},
    }
    return {
        "enumeration": {
            "walks": 16268,
            "walks_reference": 16268,
            "conformations": 2034,
            "conformations_formula": 2034,
            "brute_force_energy_max_error": 0.0,
            "brute_force_ground_state_max_error": 0.0,
        },
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


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("geocoupling", "geocoupling_learned_beats_synchronous")
def test_synchronous_numbers_ahead_of_learned_fail():
    m = metrics()
    m["per_coupling"]["learned"], m["per_coupling"]["synchronous"] = (
        m["per_coupling"]["synchronous"],
        m["per_coupling"]["learned"],
    )
    assert verdict(CLAIMS, "geocoupling_learned_beats_synchronous", m) == "fails"


@pytest.mark.counterfactual("geocoupling", "geocoupling_learned_beats_random")
def test_learned_no_better_than_random_within_noise_fails():
    m = with_learned(consistency=[0.13, 0.08, 0.14])
    assert verdict(CLAIMS, "geocoupling_learned_beats_random", m) == "fails"


@pytest.mark.counterfactual("geocoupling", "geocoupling_diversity_vs_synchronous")
def test_collapsed_diversity_fails_against_synchronous():
    assert (
        verdict(CLAIMS, "geocoupling_diversity_vs_synchronous", with_learned(unique_pairs=[0.5, 0.55, 0.6])) == "fails"
    )


@pytest.mark.counterfactual("geocoupling", "geocoupling_diversity_vs_random")
def test_collapsed_diversity_fails_against_random():
    assert verdict(CLAIMS, "geocoupling_diversity_vs_random", with_learned(unique_pairs=[0.5, 0.55, 0.6])) == "fails"


@pytest.mark.counterfactual("geocoupling", "geocoupling_structure_leading")
def test_sequence_leading_curve_fails_structure_leading():
    m = metrics() | {"learned_alpha": [0.5, 1.2, 0.4]}
    assert verdict(CLAIMS, "geocoupling_structure_leading", m) == "fails"


def test_wrong_counts_and_energies_fail_their_checks():
    m = metrics()
    m["enumeration"]["conformations"] = 2035
    m["enumeration"]["brute_force_energy_max_error"] = 1.0
    assert verdict(CLAIMS, "geocoupling_enumeration_counts", m) == "fails"
    assert verdict(CLAIMS, "geocoupling_brute_force_energies", m) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    assert (
        verdict(CLAIMS, "geocoupling_learned_beats_synchronous", with_learned(consistency=[float("nan")] * 3))
        == "fails"
    )
    assert verdict(CLAIMS, "geocoupling_structure_leading", {}) == "fails"
