"""JanusPipe's paper claims fail on counterfactual metrics (a baseline's numbers in JanusPipe's place)."""

import pytest

from repro.papers.januspipe.claims import CLAIMS
from repro.reporting.claims import verdict


def metrics(**override):
    base = {
        "closed_form_max_error": 0.0,
        "decomposition_max_rel_error": 0.0,
        "backward_to_forward_ratio": 3.5,
        "makespan_s": {"1f1b": 1.5, "hanayo": 1.4, "janus": 1.0},
        "peak_memory_bytes": {"1f1b": 10.0, "janus": 9.0},
        "measured_step_seconds": {
            "1f1b": [0.3, 0.20, 0.21, 0.22, 0.20, 0.21],
            "janus": [0.3, 0.15, 0.14, 0.15, 0.16, 0.15],
        },
    }
    return base | override


def test_every_smoke_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS if "smoke" in c.scales)


@pytest.mark.counterfactual("januspipe", "januspipe_double_backward_dominates")
def test_cheap_backward_fails():
    assert verdict(CLAIMS, "januspipe_double_backward_dominates", metrics(backward_to_forward_ratio=1.5)) == "fails"


@pytest.mark.counterfactual("januspipe", "januspipe_faster_than_1f1b_simulated")
def test_1f1b_makespan_in_januss_place_fails():
    assert (
        verdict(
            CLAIMS,
            "januspipe_faster_than_1f1b_simulated",
            metrics(makespan_s={"1f1b": 1.5, "hanayo": 1.4, "janus": 1.5}),
        )
        == "fails"
    )


@pytest.mark.counterfactual("januspipe", "januspipe_faster_than_hanayo_simulated")
def test_hanayo_faster_fails():
    assert (
        verdict(
            CLAIMS,
            "januspipe_faster_than_hanayo_simulated",
            metrics(makespan_s={"1f1b": 1.5, "hanayo": 0.9, "janus": 1.0}),
        )
        == "fails"
    )


@pytest.mark.counterfactual("januspipe", "januspipe_memory_not_above_1f1b")
def test_more_memory_than_1f1b_fails():
    assert (
        verdict(CLAIMS, "januspipe_memory_not_above_1f1b", metrics(peak_memory_bytes={"1f1b": 10.0, "janus": 12.0}))
        == "fails"
    )


@pytest.mark.counterfactual("januspipe", "januspipe_faster_than_1f1b_measured_cpu")
def test_equal_measured_step_times_fail():
    same = [0.3, 0.20, 0.21, 0.22, 0.20, 0.21]
    assert (
        verdict(
            CLAIMS,
            "januspipe_faster_than_1f1b_measured_cpu",
            metrics(measured_step_seconds={"1f1b": same, "janus": same}),
        )
        == "fails"
    )


@pytest.mark.counterfactual("januspipe", "januspipe_speedup_vs_1f1b_full")
def test_full_scale_speedup_far_from_the_paper_fails():
    tie = metrics(makespan_s={"1f1b": 1.0, "hanayo": 1.0, "janus": 1.0})
    assert verdict(CLAIMS, "januspipe_speedup_vs_1f1b_full", tie, scale="full") == "fails"
    assert (
        verdict(
            CLAIMS,
            "januspipe_speedup_vs_1f1b_full",
            metrics(makespan_s={"1f1b": 1.5, "hanayo": 1.45, "janus": 1.0}),
            scale="full",
        )
        == "pass"
    )


@pytest.mark.counterfactual("januspipe", "januspipe_speedup_vs_hanayo_full")
def test_full_scale_hanayo_speedup_far_from_the_paper_fails():
    tie = metrics(makespan_s={"1f1b": 1.0, "hanayo": 1.0, "janus": 1.0})
    assert verdict(CLAIMS, "januspipe_speedup_vs_hanayo_full", tie, scale="full") == "fails"
    assert verdict(CLAIMS, "januspipe_speedup_vs_hanayo_full", metrics(), scale="full") == "pass"


def test_broken_checks_fail():
    assert verdict(CLAIMS, "januspipe_simulator_closed_form", metrics(closed_form_max_error=1e-3)) == "fails"
    assert verdict(CLAIMS, "januspipe_decomposition_exact", metrics(decomposition_max_rel_error=1e-6)) == "fails"
    assert verdict(CLAIMS, "januspipe_faster_than_1f1b_simulated", metrics(makespan_s={})) == "fails"
