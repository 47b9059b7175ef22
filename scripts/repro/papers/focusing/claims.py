"""Focusing's claims as functions of the evaluate stage's metrics (see repro.reporting.claims). The paper was not
located: the paper claims are the brief's presumed ones (carving cuts active voxels, memory and time; quality
does not suffer), tested directionally at small scale."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Test, seed_interval


def _per_seed(m: Mapping[str, Any], mode: str, key: str) -> np.ndarray:
    return np.array([s[key] for s in m["modes"][mode]["seeds"].values()], dtype=float)


def _ratio(a: str, b: str, key: str):
    """Per-seed a / b of a benchmark quantity, t interval over seeds."""
    return lambda m: seed_interval(_per_seed(m, a, key) / _per_seed(m, b, key))


def _difference(a: str, b: str, key: str):
    return lambda m: seed_interval(_per_seed(m, a, key) - _per_seed(m, b, key))


CLAIMS = [
    ClaimSpec(
        "focusing_carving_keeps_surface",
        "check",
        "Carving with ground-truth depth keeps every latent cell that holds ground-truth surface samples, on the "
        "unit grid and on the zoomed grid (smallest kept fraction over shapes = 1)",
        Test(">=", 1.0),
        lambda m: np.min(np.array(list(m["surface_kept_min"].values()), dtype=float)),
    ),
    ClaimSpec(
        "focusing_active_ordering",
        "check",
        "Active cells: dense >= carved on every shape (smallest difference >= 0)",
        Test(">=", 0.0),
        lambda m: m["dense_minus_carved_min"],
    ),
    ClaimSpec(
        "focusing_removed_equals_zeroed",
        "check",
        "The sparse renderer (samples in inactive cells skipped) gives the same depth as the dense renderer on a "
        "grid whose inactive cells are zero (largest difference <= 1e-6)",
        Test("<=", 1e-6),
        lambda m: m["removed_minus_zeroed_max"],
    ),
    ClaimSpec(
        "focusing_zoom_keeps_target",
        "check",
        "Adaptive zooming keeps the active cells of every shape in the target range (share of shapes inside = 1)",
        Test(">=", 1.0),
        lambda m: m["zoom_in_target_fraction"],
    ),
    ClaimSpec(
        "focusing_carving_cuts_active_voxels",
        "paper",
        "Depth-driven carving cuts the active latent cells by a large factor: mean dense / mean carved active "
        "cells on the same 8^3 grid > 2",
        Test(">", 2.0),
        lambda m: float(m["active_cells"]["dense"] / m["active_cells"]["carved"]),
    ),
    ClaimSpec(
        "focusing_carving_cuts_memory",
        "paper",
        "Carving cuts training memory: bytes of tensors saved for backward per step (CPU proxy of activation "
        "memory), dense / carved, t interval over seeds, > 1",
        Test(">", 1.0),
        _ratio("dense", "carved", "saved_bytes_per_step"),
    ),
    ClaimSpec(
        "focusing_carving_cuts_time",
        "paper",
        "Carving cuts the time per training step: seconds per step dense / carved (CPU), t interval over seeds, > 1",
        Test(">", 1.0),
        _ratio("dense", "carved", "seconds_per_step"),
    ),
    ClaimSpec(
        "focusing_chamfer_not_worse",
        "paper",
        "At lower memory, carving plus adaptive zooming reconstructs held-out shapes at least as well as the same "
        "VAE trained without carving: L1 Chamfer dense minus focusing, t interval over seeds, > 0",
        Test(">", 0.0),
        _difference("dense", "focusing", "chamfer"),
    ),
    ClaimSpec(
        "focusing_fscore_higher",
        "paper",
        "Carving plus adaptive zooming raises the F-score (tau = fscore_tau) on held-out shapes over the VAE "
        "trained without carving: focusing minus dense, t interval over seeds, > 0",
        Test(">", 0.0),
        _difference("focusing", "dense", "fscore"),
    ),
]
