"""Holi-Spatial's paper claims fail on counterfactual metrics (a baseline's or ablation's numbers in place of the
stage the paper credits)."""

import copy

import pytest

from repro.papers.holi_spatial.claims import CLAIMS
from repro.reporting.claims import verdict

UNITS = 6


def _det(ap, precision, recall):
    per = {
        "ap_per_unit": [ap + 0.01 * k for k in range(UNITS)],
        "precision_per_unit": [precision + 0.01 * k for k in range(UNITS)],
        "recall_per_unit": [recall - 0.01 * k for k in range(UNITS)],
    }
    return {
        "iou25": {"ap": ap, "precision": precision, "recall": recall} | per,
        "iou50": {"ap": ap, "precision": precision, "recall": recall} | per,
    }


def metrics() -> dict:
    """Metrics shaped as the evaluate stage writes them, following the paper's ablation pattern."""
    return {
        "detection": {
            "single_frame": _det(0.4, 0.1, 0.8),
            "multiview_raw": _det(0.6, 0.15, 0.8),
            "fused": _det(0.75, 0.3, 0.85),
            "filtered": _det(0.6, 0.8, 0.6),
            "verified": _det(0.7, 0.8, 0.75),
            "oracle": _det(1.0, 1.0, 1.0),
        },
        "oracle_multiside_iou50": {"ap": 1.0},
        "verifier_iou25": {
            "high_tier": [1, 1, 1, 0],
            "admitted": [1, 1, 0, 1, 1],
            "rejected": [0, 0, 1, 0, 0, 0, 0, 0],
        },
        "depth": {
            "noisy": {"f1": [0.5 + 0.01 * k for k in range(UNITS)]},
            "fused": {"f1": [0.9 - 0.01 * k for k in range(UNITS)]},
        },
        "qa": {
            "single_frame": {"object_accuracy_per_unit": [0.5 + 0.02 * k for k in range(UNITS)]},
            "verified": {"object_accuracy_per_unit": [0.8 - 0.01 * k for k in range(UNITS)]},
            "ground_truth": {"per_template": {"object_distance": 1.0, "camera_rotation": 1.0}},
        },
    }


def swapped(a: str, b: str) -> dict:
    m = copy.deepcopy(metrics())
    m["detection"][a] = copy.deepcopy(metrics()["detection"][b])
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("holi-spatial", "holi_fusion_depth_f1")
def test_monocular_depth_in_place_of_fused_fails():
    m = metrics()
    m["depth"]["fused"] = m["depth"]["noisy"]
    assert verdict(CLAIMS, "holi_fusion_depth_f1", m) == "fails"


@pytest.mark.counterfactual("holi-spatial", "holi_fusion_ap25")
def test_single_frame_boxes_in_place_of_fused_fail():
    assert verdict(CLAIMS, "holi_fusion_ap25", swapped("fused", "single_frame")) == "fails"


@pytest.mark.counterfactual("holi-spatial", "holi_filter_raises_precision")
def test_unfiltered_boxes_in_place_of_filtered_fail_precision():
    assert verdict(CLAIMS, "holi_filter_raises_precision", swapped("filtered", "fused")) == "fails"


def test_recall_rising_under_filtering_or_falling_under_verification_fails_the_checks():
    m = copy.deepcopy(metrics())
    m["detection"]["filtered"]["iou25"]["recall_per_unit"][0] = 0.99
    assert verdict(CLAIMS, "holi_filter_lowers_recall", m) == "fails"
    assert verdict(CLAIMS, "holi_verifier_raises_recall", m) == "fails"


@pytest.mark.counterfactual("holi-spatial", "holi_filter_recall_drop_bounded")
def test_filtering_that_drops_more_recall_than_it_gains_precision_fails():
    """Filtering that keeps only a few boxes: precision up 0.1, recall down 0.5."""
    m = copy.deepcopy(metrics())
    m["detection"]["filtered"] = _det(0.3, 0.4, 0.35)
    assert verdict(CLAIMS, "holi_filter_recall_drop_bounded", m) == "fails"


@pytest.mark.counterfactual("holi-spatial", "holi_verifier_admits_true_boxes")
def test_a_verifier_admitting_at_random_fails():
    """Admissions as often true as rejections (a coin), or no admission at all."""
    m = copy.deepcopy(metrics())
    m["verifier_iou25"] = {"high_tier": [1], "admitted": [1, 0, 0, 0, 1, 0], "rejected": [0, 1, 0, 0, 1, 0, 0, 0]}
    assert verdict(CLAIMS, "holi_verifier_admits_true_boxes", m) == "fails"
    m["verifier_iou25"]["admitted"] = []
    assert verdict(CLAIMS, "holi_verifier_admits_true_boxes", m) == "fails"


@pytest.mark.counterfactual("holi-spatial", "holi_verifier_keeps_precision")
def test_unfiltered_precision_in_place_of_verified_fails():
    assert verdict(CLAIMS, "holi_verifier_keeps_precision", swapped("verified", "fused")) == "fails"


@pytest.mark.counterfactual("holi-spatial", "holi_qa_curated_beats_single_frame")
def test_single_frame_answers_in_place_of_curated_fail():
    m = metrics()
    m["qa"]["verified"] = m["qa"]["single_frame"]
    assert verdict(CLAIMS, "holi_qa_curated_beats_single_frame", m) == "fails"


def test_missing_metric_fails():
    m = metrics()
    m["depth"]["fused"]["f1"][0] = float("nan")
    assert verdict(CLAIMS, "holi_fusion_depth_f1", m) == "fails"
    m = metrics()
    m["qa"]["ground_truth"]["per_template"]["object_distance"] = 0.9
    assert verdict(CLAIMS, "holi_qa_answers_exact", m) == "fails"
