"""Focusing's paper claims fail on counterfactual metrics (the baseline's numbers in the method's place, an
accuracy that is not matched), on metrics where every model learned; an untrained model makes them inconclusive."""

import copy

import numpy as np
import pytest

from repro.papers.focusing.claims import CLAIMS
from repro.reporting.claims import verdict

ITEMS = 12
JITTER = np.linspace(-0.01, 0.01, ITEMS)


def mode(chamfer: float, fscore: float) -> dict:
    return {"chamfer": list(chamfer + JITTER), "fscore": list(fscore - JITTER)}


def bench(saved: float, seconds: float, cells: float) -> dict:
    steps = np.linspace(0.9, 1.1, 16)
    return {
        "saved_bytes": list(saved * steps),
        "seconds": list(seconds * steps),
        "cuda_peak_bytes": [None] * 16,
        "active_cells": list(cells * steps),
    }


def metrics() -> dict:
    return {
        "items": {
            "focusing": mode(0.10, 0.60),
            "frustum": mode(0.10, 0.60),
            "sectional": mode(0.14, 0.48),
            "random": mode(0.15, 0.41),
            "untrained": mode(0.29, 0.15),
        },
        "benchmark": {
            "focusing": bench(2.3e6, 0.036, 150),
            "frustum": bench(5.0e6, 0.050, 460),
            "sectional": bench(4.4e6, 0.044, 145),
            "random": bench(2.1e6, 0.037, 150),
        },
        "memory_measure": "saved_bytes",
        "active_cells": {"carved": 150.0, "frustum": 460.0, "sectional": 145.0},
        "visible_surface_kept_min": 1.0,
        "carved_within_frustum": 1.0,
        "removed_minus_zeroed_max": 0.0,
    }


def with_items(m: dict, target: str, source: str) -> dict:
    out = copy.deepcopy(m)
    out["items"][target] = copy.deepcopy(m["items"][source])
    return out


def test_every_claim_passes_on_metrics_that_support_it():
    m = metrics()
    assert {c.id: verdict(CLAIMS, c.id, m) for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


def test_an_untrained_baseline_makes_its_claims_inconclusive():
    m = with_items(metrics(), "random", "untrained")
    assert verdict(CLAIMS, "focusing_learned_random", m) == "fails"
    assert verdict(CLAIMS, "focusing_beats_random_chamfer", m) == "inconclusive"


@pytest.mark.counterfactual("focusing", "focusing_carving_cuts_active_voxels")
def test_carving_that_keeps_almost_every_frustum_cell_fails():
    m = metrics()
    m["active_cells"]["carved"] = 400.0
    assert verdict(CLAIMS, "focusing_carving_cuts_active_voxels", m) == "fails"


@pytest.mark.counterfactual("focusing", "focusing_beats_random_chamfer")
def test_focusing_chamfer_no_better_than_random_fails():
    m = with_items(metrics(), "focusing", "random")
    assert verdict(CLAIMS, "focusing_beats_random_chamfer", m) == "fails"


@pytest.mark.counterfactual("focusing", "focusing_beats_random_fscore")
def test_focusing_fscore_of_random_fails():
    assert verdict(CLAIMS, "focusing_beats_random_fscore", with_items(metrics(), "focusing", "random")) == "fails"


@pytest.mark.counterfactual("focusing", "focusing_beats_sectional_chamfer")
def test_sectional_chamfer_in_place_of_focusing_fails():
    assert (
        verdict(CLAIMS, "focusing_beats_sectional_chamfer", with_items(metrics(), "focusing", "sectional")) == "fails"
    )


@pytest.mark.counterfactual("focusing", "focusing_beats_sectional_fscore")
def test_sectional_better_than_focusing_fails():
    m = metrics()
    m["items"]["sectional"], m["items"]["focusing"] = m["items"]["focusing"], m["items"]["sectional"]
    assert verdict(CLAIMS, "focusing_beats_sectional_fscore", m) == "fails"


@pytest.mark.counterfactual("focusing", "focusing_memory_at_matched_accuracy")
def test_memory_saving_without_matched_accuracy_fails():
    m = metrics()
    m["items"]["focusing"]["chamfer"] = list(np.asarray(m["items"]["focusing"]["chamfer"]) * 1.3)
    assert verdict(CLAIMS, "focusing_learned_focusing", m) == "pass"
    assert verdict(CLAIMS, "focusing_memory_at_matched_accuracy", m) == "fails"
    m = metrics()
    m["benchmark"]["focusing"]["saved_bytes"] = m["benchmark"]["frustum"]["saved_bytes"]
    assert verdict(CLAIMS, "focusing_memory_at_matched_accuracy", m) == "fails"


@pytest.mark.counterfactual("focusing", "focusing_time_at_matched_accuracy")
def test_frustum_time_in_place_of_focusing_fails():
    m = metrics()
    m["benchmark"]["focusing"]["seconds"] = m["benchmark"]["frustum"]["seconds"]
    assert verdict(CLAIMS, "focusing_time_at_matched_accuracy", m) == "fails"


def test_checks_fail_when_carving_loses_surface_or_budgets_drift():
    m = metrics()
    m["visible_surface_kept_min"] = 0.98
    assert verdict(CLAIMS, "focusing_carving_keeps_visible_surface", m) == "fails"
    m = metrics()
    m["benchmark"]["random"]["active_cells"] = list(np.asarray(m["benchmark"]["random"]["active_cells"]) + 1)
    assert verdict(CLAIMS, "focusing_random_budget_matched", m) == "fails"
    m["benchmark"]["sectional"]["active_cells"] = list(np.asarray(m["benchmark"]["sectional"]["active_cells"]) * 3)
    assert verdict(CLAIMS, "focusing_sectional_budget_matched", m) == "fails"
