"""SynGR's paper claims fail on counterfactual metrics (the baseline's numbers in SynGR's place, no synergy gap)."""

import copy

import numpy as np
import pytest

from repro.papers.syngr.claims import CLAIMS
from repro.reporting.claims import verdict

SEED_OFFSETS = np.array([0.0, 0.004, -0.003])


def variant(ndcg: float, share: float = 0.5) -> dict:
    return {
        "hr@10": (2 * ndcg + SEED_OFFSETS).tolist(),
        "ndcg@10": (ndcg + SEED_OFFSETS).tolist(),
        "share_after": (share + SEED_OFFSETS).tolist(),
    }


def metrics() -> dict:
    """Metrics shaped as the evaluate stage writes them, with SynGR ahead where the paper says it is."""
    return {
        "real": ["ml100k"],
        "checks": {"invalid_generations": 0, "generated": 100, "id_collisions": 0, "masking_deviation": 0},
        "benchmarks": {
            "synthetic_on": {
                "variants": {
                    "text": variant(0.08, 0.5),
                    "image": variant(0.07, 0.5),
                    "fused": variant(0.09),
                    "concat": variant(0.10, 0.8),
                    "syngr": variant(0.14, 0.55),
                }
            },
            "synthetic_off": {"variants": {"concat": variant(0.12), "syngr": variant(0.121)}},
            "ml100k": {"variants": {"concat": variant(0.05), "syngr": variant(0.06)}},
        },
    }


def replaced(bench: str, src: str = "concat", dst: str = "syngr") -> dict:
    """Metrics where ``dst`` on ``bench`` has ``src``'s numbers."""
    m = copy.deepcopy(metrics())
    m["benchmarks"][bench]["variants"][dst] = copy.deepcopy(m["benchmarks"][bench]["variants"][src])
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics(), scale) == "pass" for c in CLAIMS for scale in c.scales)


@pytest.mark.counterfactual("syngr", "syngr_beats_concat_synergy_hr10")
def test_concat_numbers_in_syngr_place_fail_hr10():
    assert verdict(CLAIMS, "syngr_beats_concat_synergy_hr10", replaced("synthetic_on")) == "fails"


@pytest.mark.counterfactual("syngr", "syngr_beats_concat_synergy_ndcg10")
def test_concat_numbers_in_syngr_place_fail_ndcg10():
    assert verdict(CLAIMS, "syngr_beats_concat_synergy_ndcg10", replaced("synthetic_on")) == "fails"


@pytest.mark.counterfactual("syngr", "syngr_no_gap_without_synergy")
def test_large_gain_without_synergy_fails_the_control():
    m = metrics()
    m["benchmarks"]["synthetic_off"]["variants"]["syngr"] = variant(0.16)
    assert verdict(CLAIMS, "syngr_no_gap_without_synergy", m) == "fails"


@pytest.mark.counterfactual("syngr", "syngr_gain_explained_by_synergy")
def test_same_gain_with_and_without_synergy_fails():
    m = metrics()
    m["benchmarks"]["synthetic_off"]["variants"]["syngr"] = variant(0.16)
    assert verdict(CLAIMS, "syngr_gain_explained_by_synergy", m) == "fails"


@pytest.mark.counterfactual("syngr", "syngr_beats_alignment_fusion")
def test_fusion_numbers_in_syngr_place_fail():
    assert verdict(CLAIMS, "syngr_beats_alignment_fusion", replaced("synthetic_on", src="fused")) == "fails"


@pytest.mark.counterfactual("syngr", "syngr_beats_single_modality")
def test_text_numbers_in_syngr_place_fail():
    assert verdict(CLAIMS, "syngr_beats_single_modality", replaced("synthetic_on", src="text")) == "fails"


@pytest.mark.counterfactual("syngr", "syngr_balances_modalities")
def test_concat_attention_in_syngr_place_fails():
    assert verdict(CLAIMS, "syngr_balances_modalities", replaced("synthetic_on")) == "fails"


@pytest.mark.counterfactual("syngr", "syngr_beats_concat_real")
def test_concat_numbers_in_syngr_place_fail_on_real_data():
    assert verdict(CLAIMS, "syngr_beats_concat_real", replaced("ml100k")) == "fails"


@pytest.mark.counterfactual("syngr", "syngr_average_gain")
def test_no_average_gain_fails_at_full_scale():
    assert verdict(CLAIMS, "syngr_average_gain", replaced("ml100k"), "full") == "fails"


def test_checks_fail_on_a_broken_implementation():
    m = metrics()
    m["checks"] = {"invalid_generations": 3, "generated": 100, "id_collisions": 1, "masking_deviation": 2}
    for claim in ("syngr_trie_generations_valid", "syngr_ids_collision_free", "syngr_masking_exact"):
        assert verdict(CLAIMS, claim, m) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    m = metrics()
    m["benchmarks"]["synthetic_on"]["variants"]["syngr"]["ndcg@10"] = [float("nan")] * 3
    del m["benchmarks"]["ml100k"]
    for claim in ("syngr_beats_concat_synergy_ndcg10", "syngr_beats_concat_real"):
        assert verdict(CLAIMS, claim, m) == "fails"
