"""Focusing's paper claims fail on counterfactual metrics (the baseline's numbers in the method's place)."""

import copy

import pytest

from repro.papers.focusing.claims import CLAIMS
from repro.reporting.claims import verdict

JITTER = (0.0, 0.01, -0.01)


def mode(chamfer, fscore, saved, seconds):
    return {
        "seeds": {
            f"s{i}": {
                "chamfer": chamfer + j,
                "fscore": fscore - j,
                "saved_bytes_per_step": saved * (1 + j),
                "seconds_per_step": seconds * (1 + j),
            }
            for i, j in enumerate(JITTER)
        }
    }


def metrics() -> dict:
    return {
        "modes": {
            "dense": mode(0.15, 0.40, 6e6, 0.10),
            "carved": mode(0.13, 0.45, 4e6, 0.07),
            "focusing": mode(0.10, 0.55, 3.5e6, 0.06),
        },
        "surface_kept_min": {"carved": 1.0, "focusing": 1.0},
        "active_cells": {"dense": 512.0, "carved": 180.0, "focusing": 140.0},
        "dense_minus_carved_min": 90.0,
        "zoom_in_target_fraction": 1.0,
        "removed_minus_zeroed_max": 0.0,
    }


def with_mode(m: dict, target: str, source: str) -> dict:
    out = copy.deepcopy(m)
    out["modes"][target] = copy.deepcopy(m["modes"][source])
    return out


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("focusing", "focusing_carving_cuts_active_voxels")
def test_carving_that_keeps_almost_every_cell_fails():
    m = metrics()
    m["active_cells"]["carved"] = 400.0
    assert verdict(CLAIMS, "focusing_carving_cuts_active_voxels", m) == "fails"


@pytest.mark.counterfactual("focusing", "focusing_carving_cuts_memory")
def test_dense_memory_in_place_of_carved_fails():
    assert verdict(CLAIMS, "focusing_carving_cuts_memory", with_mode(metrics(), "carved", "dense")) == "fails"


@pytest.mark.counterfactual("focusing", "focusing_carving_cuts_time")
def test_dense_time_in_place_of_carved_fails():
    assert verdict(CLAIMS, "focusing_carving_cuts_time", with_mode(metrics(), "carved", "dense")) == "fails"


@pytest.mark.counterfactual("focusing", "focusing_chamfer_not_worse")
def test_dense_chamfer_in_place_of_focusing_fails():
    assert verdict(CLAIMS, "focusing_chamfer_not_worse", with_mode(metrics(), "focusing", "dense")) == "fails"


@pytest.mark.counterfactual("focusing", "focusing_fscore_higher")
def test_dense_fscore_in_place_of_focusing_fails():
    assert verdict(CLAIMS, "focusing_fscore_higher", with_mode(metrics(), "focusing", "dense")) == "fails"


def test_carving_that_drops_a_surface_cell_fails_the_safety_check():
    m = metrics()
    m["surface_kept_min"]["focusing"] = 0.98
    assert verdict(CLAIMS, "focusing_carving_keeps_surface", m) == "fails"
