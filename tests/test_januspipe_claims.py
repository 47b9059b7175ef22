"""JanusPipe's paper claims fail on counterfactual metrics (a baseline's numbers in JanusPipe's place)."""

import numpy as np
import pytest

from repro.papers.januspipe.claims import CLAIMS
from repro.reporting.claims import verdict


def resampled(values: dict, spread: float = 0.02, n: int = 50) -> dict:
    """Bootstrap resamples around point values (a few per cent of timing noise)."""
    rng = np.random.default_rng(0)
    return {k: (v * (1 + spread * rng.standard_normal(n))).tolist() for k, v in values.items()}


def metrics(makespan=None, memory=None, phases=(1.0, 1.4, 0.8, 1.6), **override):
    makespan = makespan or {"1f1b": 1.5, "hanayo": 1.4, "janus": 1.0}
    memory = memory or {"1f1b": 10.0, "janus": 9.0}
    rng = np.random.default_rng(1)
    base = {
        "closed_form_max_error": 0.0,
        "decomposition_max_rel_error": 0.0,
        "backward_to_forward_ratio": float(np.sum(phases[1:]) / phases[0]),
        "makespan_s": makespan,
        "peak_memory_bytes": memory,
        "bootstrap": {
            "makespan_s": resampled(makespan),
            "peak_memory_bytes": resampled(memory, spread=0.0),
            "phase_seconds": (np.asarray(phases) * (1 + 0.02 * rng.standard_normal((50, 4)))).tolist(),
        },
        "measured_step_seconds": {
            "1f1b": [0.3, 0.20, 0.21, 0.22, 0.20, 0.21],
            "janus": [0.3, 0.15, 0.14, 0.15, 0.16, 0.15],
        },
        "mlip_test": {
            "per_structure_force_mae": [0.1, 0.12, 0.09, 0.11, 0.1, 0.1, 0.13, 0.08],
            "per_structure_zero_force_mae": [0.7, 0.72, 0.69, 0.75, 0.7, 0.68, 0.71, 0.73],
        },
    }
    return base | override


def test_every_smoke_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS if "smoke" in c.scales)


def test_cheap_backward_fails_the_check():
    assert verdict(CLAIMS, "januspipe_double_backward_dominates", metrics(phases=(1.0, 0.5, 0.4, 0.6))) == "fails"


def test_an_mlip_no_better_than_zero_forces_fails_its_learning_check():
    m = metrics()
    m["mlip_test"] = m["mlip_test"] | {"per_structure_force_mae": m["mlip_test"]["per_structure_zero_force_mae"]}
    assert verdict(CLAIMS, "januspipe_mlip_learned", m) == "fails"


def test_timing_claims_are_marked_and_their_interval_decides():
    timing = {c.id for c in CLAIMS if c.timing}
    assert {"januspipe_faster_than_1f1b_simulated", "januspipe_faster_than_1f1b_measured_cpu"} <= timing
    assert "januspipe_decomposition_exact" not in timing and "januspipe_mlip_learned" not in timing
    m = metrics()
    m["bootstrap"]["makespan_s"] = resampled({"1f1b": 1.05, "hanayo": 1.4, "janus": 1.0}, spread=0.2)
    assert verdict(CLAIMS, "januspipe_faster_than_1f1b_simulated", m) == "fails"


@pytest.mark.counterfactual("januspipe", "januspipe_faster_than_1f1b_simulated")
def test_1f1b_makespan_in_januss_place_fails():
    assert (
        verdict(
            CLAIMS,
            "januspipe_faster_than_1f1b_simulated",
            metrics(makespan={"1f1b": 1.5, "hanayo": 1.4, "janus": 1.5}),
        )
        == "fails"
    )


@pytest.mark.counterfactual("januspipe", "januspipe_faster_than_hanayo_simulated")
def test_hanayo_faster_fails():
    assert (
        verdict(
            CLAIMS,
            "januspipe_faster_than_hanayo_simulated",
            metrics(makespan={"1f1b": 1.5, "hanayo": 0.9, "janus": 1.0}),
        )
        == "fails"
    )


@pytest.mark.counterfactual("januspipe", "januspipe_memory_not_above_1f1b")
def test_more_memory_than_1f1b_fails():
    assert verdict(CLAIMS, "januspipe_memory_not_above_1f1b", metrics(memory={"1f1b": 10.0, "janus": 12.0})) == "fails"


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
    tie = metrics(makespan={"1f1b": 1.0, "hanayo": 1.0, "janus": 1.0})
    assert verdict(CLAIMS, "januspipe_speedup_vs_1f1b_full", tie, scale="full") == "fails"
    assert (
        verdict(
            CLAIMS,
            "januspipe_speedup_vs_1f1b_full",
            metrics(makespan={"1f1b": 1.5, "hanayo": 1.45, "janus": 1.0}),
            scale="full",
        )
        == "pass"
    )


@pytest.mark.counterfactual("januspipe", "januspipe_speedup_vs_hanayo_full")
def test_full_scale_hanayo_speedup_far_from_the_paper_fails():
    tie = metrics(makespan={"1f1b": 1.0, "hanayo": 1.0, "janus": 1.0})
    assert verdict(CLAIMS, "januspipe_speedup_vs_hanayo_full", tie, scale="full") == "fails"
    assert verdict(CLAIMS, "januspipe_speedup_vs_hanayo_full", metrics(), scale="full") == "pass"


def test_broken_checks_fail():
    assert verdict(CLAIMS, "januspipe_simulator_closed_form", metrics(closed_form_max_error=1e-3)) == "fails"
    assert verdict(CLAIMS, "januspipe_decomposition_exact", metrics(decomposition_max_rel_error=1e-6)) == "fails"
    assert verdict(CLAIMS, "januspipe_faster_than_1f1b_simulated", metrics(makespan_s={})) == "fails"
    assert verdict(CLAIMS, "januspipe_faster_than_1f1b_simulated", metrics(bootstrap={})) == "fails"
