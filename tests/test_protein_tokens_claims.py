"""APT's paper claims fail on counterfactual metrics (the baseline's or the ablation's numbers in APT's place)."""

import numpy as np
import pytest

from repro.papers.protein_tokens.claims import CLAIMS
from repro.reporting.claims import verdict

GROUPS = 12
RNG = np.random.default_rng(0)


def noisy(mean, sd=0.05):
    return (mean + RNG.normal(0, sd, GROUPS)).tolist()


def metrics(**override):
    """Metrics shaped as the evaluate stage writes them, with APT ahead everywhere."""
    by_k = [noisy(6.0 - 0.4 * k) for k in range(8)]
    base = {
        "apt_rmsd_by_k_per_group": by_k,
        "rmsd_at_k_per_group": {"apt": by_k[-1], "local": noisy(4.0), "apt_no_nested": noisy(3.0)},
        "medoid_rmsd_per_group": noisy(8.0),
        "prefix_rmsd_per_group": {"apt": by_k[1], "apt_no_nested": noisy(8.0)},
        "probe": {
            "correct_per_group": {
                "apt_global": noisy(0.8),
                "local_concatenated": noisy(0.65),
                "class_prior": noisy(0.4),
            },
            "dimensions": {"apt_global": 32, "local_concatenated": 32},
        },
        "shrink": {"gap_to_own_per_group": noisy(0.1), "gap_to_other_per_group": noisy(0.4)},
        "checks": {
            "kabsch_rmsd_max_change_under_rigid_motion": 1e-6,
            "kabsch_rmsd_max_diff_torch_vs_numpy": 1e-7,
            "fsq_max_grid_error": 0.0,
            "fsq_in_range": True,
            "ste_max_gradient_error": 0.0,
            "token_max_abs_change_under_rigid_motion": 1e-5,
        },
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert {c.id: verdict(CLAIMS, c.id, metrics()) for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


@pytest.mark.counterfactual("protein-tokens", "apt_coarse_to_fine")
def test_ablation_curve_without_order_fails_coarse_to_fine():
    flat = [noisy(5.0, 0.3) for _ in range(8)]  # no nested dropout: extra tokens do not help in order
    assert verdict(CLAIMS, "apt_coarse_to_fine", metrics(apt_rmsd_by_k_per_group=flat)) == "fails"


@pytest.mark.counterfactual("protein-tokens", "apt_global_beats_local_equal_bits")
def test_local_numbers_in_apts_place_fail_equal_bits():
    m = metrics()
    swapped = {"apt": m["rmsd_at_k_per_group"]["local"], "local": m["rmsd_at_k_per_group"]["apt"]}
    assert verdict(CLAIMS, "apt_global_beats_local_equal_bits", metrics(rmsd_at_k_per_group=swapped)) == "fails"


@pytest.mark.counterfactual("protein-tokens", "apt_nested_dropout_makes_prefixes_decodable")
def test_ablation_as_good_as_apt_fails_nested_dropout_claim():
    same = noisy(5.0)
    prefix = {"apt": same, "apt_no_nested": same}
    assert (
        verdict(CLAIMS, "apt_nested_dropout_makes_prefixes_decodable", metrics(prefix_rmsd_per_group=prefix)) == "fails"
    )


@pytest.mark.counterfactual("protein-tokens", "apt_probe_beats_local_equal_size")
def test_local_probe_as_accurate_fails_probe_claim():
    probe = metrics()["probe"]
    correct = probe["correct_per_group"] | {"apt_global": probe["correct_per_group"]["local_concatenated"]}
    assert (
        verdict(CLAIMS, "apt_probe_beats_local_equal_size", metrics(probe=probe | {"correct_per_group": correct}))
        == "fails"
    )


def test_probes_of_unequal_feature_counts_are_not_compared():
    probe = metrics()["probe"] | {"dimensions": {"apt_global": 32, "local_concatenated": 4}}
    assert verdict(CLAIMS, "apt_probe_beats_local_equal_size", metrics(probe=probe)) == "fails"


@pytest.mark.parametrize("variant", ["apt", "local", "apt_no_nested"])
def test_a_tokenizer_no_better_than_the_medoid_leaves_its_claims_inconclusive(variant):
    m = metrics()
    m["rmsd_at_k_per_group"] = m["rmsd_at_k_per_group"] | {variant: m["medoid_rmsd_per_group"]}
    assert verdict(CLAIMS, f"learn_{variant}", m) == "fails"
    resting = [c.id for c in CLAIMS if f"learn_{variant}" in (c.rests_on or ())]
    assert resting and all(verdict(CLAIMS, c, m) == "inconclusive" for c in resting)


def test_a_probe_no_better_than_the_class_prior_fails_its_learning_check():
    probe = metrics()["probe"]
    correct = probe["correct_per_group"] | {"apt_global": probe["correct_per_group"]["class_prior"]}
    m = metrics(probe=probe | {"correct_per_group": correct})
    assert verdict(CLAIMS, "learn_probe_apt_global", m) == "fails"
    assert verdict(CLAIMS, "apt_probe_beats_local_equal_size", m) == "inconclusive"


@pytest.mark.counterfactual("protein-tokens", "apt_zero_shot_shrinking")
def test_shrunk_decode_as_far_from_its_window_as_from_another_fails():
    gaps = noisy(0.4)
    shrink = {"gap_to_own_per_group": gaps, "gap_to_other_per_group": gaps}
    assert verdict(CLAIMS, "apt_zero_shot_shrinking", metrics(shrink=shrink)) == "fails"


def test_missing_or_nan_inputs_fail():
    assert verdict(CLAIMS, "apt_coarse_to_fine", metrics(apt_rmsd_by_k_per_group=[[np.nan] * GROUPS] * 8)) == "fails"
    checks = metrics()["checks"] | {"fsq_in_range": False}
    assert verdict(CLAIMS, "apt_fsq_on_grid", metrics(checks=checks)) == "fails"
