"""LoDA's paper claims fail on counterfactual metrics (a baseline's or an ablation's numbers in LoDA's place)."""

import pytest

from repro.papers.loda.claims import CLAIMS
from repro.reporting.claims import verdict


def metrics():
    """Metrics shaped as the evaluate stage writes them, with LoDA ahead everywhere."""

    def method(a_last, forgetting):
        return {"a_last": a_last, "forgetting": forgetting}

    return {
        "methods": {
            "loda": method([0.80, 0.82, 0.81], [0.05, 0.06, 0.05]),
            "inflora": method([0.75, 0.76, 0.74], [0.04, 0.05, 0.04]),
            "seq_lora": method([0.60, 0.62, 0.61], [0.30, 0.31, 0.29]),
            "loda_no_general": method([0.70, 0.71, 0.72], [0.02, 0.03, 0.02]),
            "loda_no_recalibration": method([0.74, 0.75, 0.73], [0.15, 0.16, 0.14]),
        },
        "energy": {"new_share_isolated": [0.5, 0.55, 0.52], "new_share_null": [0.2, 0.25, 0.22]},
        "learning": learned(),
        "checks": {
            "isolated_max_principal_angle": 1e-9,
            "general_max_orthonormality_error": 1e-14,
            "recalibration_max_residual": 1e-12,
        },
    }


def learned(error=0.2, n=200):
    """Per-item test errors of final models that learned (20 %) and of the class prior (90 %)."""
    model = [1.0] * int(error * n) + [0.0] * (n - int(error * n))
    methods = ("loda", "inflora", "seq_lora", "loda_no_general", "loda_no_recalibration")
    return {"trivial": [1.0] * (9 * n // 10) + [0.0] * (n // 10)} | {m: model for m in methods}


def test_a_method_no_better_than_the_class_prior_makes_its_comparisons_inconclusive():
    m = metrics()
    m["learning"]["inflora"] = m["learning"]["trivial"]
    assert verdict(CLAIMS, "learn_inflora", m) == "fails"
    assert verdict(CLAIMS, "loda_beats_inflora", m) == "inconclusive"
    assert verdict(CLAIMS, "loda_beats_sequential_lora", m) == "pass"


def swap(m, method, other):
    m["methods"][method] = m["methods"][other]
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("loda", "loda_beats_inflora")
def test_inflora_ahead_fails():
    m = metrics()
    m["methods"]["inflora"]["a_last"] = [0.85, 0.86, 0.84]
    assert verdict(CLAIMS, "loda_beats_inflora", m) == "fails"


@pytest.mark.counterfactual("loda", "loda_beats_sequential_lora")
def test_sequential_lora_in_loda_place_fails():
    assert verdict(CLAIMS, "loda_beats_sequential_lora", swap(metrics(), "loda", "seq_lora")) == "fails"


@pytest.mark.counterfactual("loda", "loda_forgets_less_than_sequential_lora")
def test_forgetting_as_much_as_sequential_lora_fails():
    assert verdict(CLAIMS, "loda_forgets_less_than_sequential_lora", swap(metrics(), "loda", "seq_lora")) == "fails"


@pytest.mark.counterfactual("loda", "loda_general_subspace_helps")
def test_isolation_only_as_good_fails():
    assert verdict(CLAIMS, "loda_general_subspace_helps", swap(metrics(), "loda", "loda_no_general")) == "fails"


@pytest.mark.counterfactual("loda", "loda_recalibration_helps")
def test_no_recalibration_as_good_fails():
    m = swap(metrics(), "loda", "loda_no_recalibration")
    assert verdict(CLAIMS, "loda_recalibration_helps", m) == "fails"


@pytest.mark.counterfactual("loda", "loda_null_bases_inactive")
def test_null_bases_capturing_more_energy_fails():
    m = metrics()
    m["energy"] = {"new_share_isolated": [0.2, 0.25, 0.22], "new_share_null": [0.5, 0.55, 0.52]}
    assert verdict(CLAIMS, "loda_null_bases_inactive", m) == "fails"


def test_nan_inputs_give_failing_claims():
    m = metrics()
    m["checks"]["recalibration_max_residual"] = float("nan")
    m["methods"]["loda"]["a_last"] = [0.8, float("nan"), 0.8]
    assert verdict(CLAIMS, "loda_recalibration_solves_least_squares", m) == "fails"
    assert verdict(CLAIMS, "loda_beats_sequential_lora", m) == "fails"


def test_metrics_from_accuracy_matrices_by_hand():
    import numpy as np
    import pandas as pd

    from repro.papers.loda.evaluate import average_incremental, energy_summary, method_metrics

    acc = np.array([[0.9, 0.1, 0.2], [0.7, 0.8, 0.1], [0.6, 0.5, 0.9]])
    assert average_incremental(acc) == pytest.approx(np.mean([0.9, 0.75, 2.0 / 3.0]))
    m = method_metrics({"loda/0/acc": acc}, ["loda"], [0])["loda"]
    assert m["a_last"] == [pytest.approx(2.0 / 3.0)]
    assert m["forgetting"] == [pytest.approx(((0.9 - 0.6) + (0.8 - 0.5)) / 2)]
    assert m["bwt"] == [pytest.approx(((0.6 - 0.9) + (0.5 - 0.8)) / 2)]
    rows = pd.DataFrame(
        {
            "method": ["loda"] * 2,
            "seed": [0, 0],
            "new_energy_top": [2.0, 4.0],
            **{f"new_{b}": [1.0, 1.0] for b in ("isolated", "null", "general")},
            **{f"old_{b}": [0.5, 0.25] for b in ("isolated", "null", "general")},
        }
    )
    e = energy_summary(rows, [0])
    assert e["new_share_null"] == [pytest.approx((0.5 + 0.25) / 2)]
    assert e["new_old_ratio_isolated"] == [pytest.approx(3.0)]
