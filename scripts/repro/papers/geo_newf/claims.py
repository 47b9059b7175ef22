"""Geo-NeW's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, learning_check, seed_interval, skill_over_trivial


def _per_seed_gap(m: Mapping[str, Any], key: str) -> Measured:
    """Baseline minus Geo-NeW per seed (seeds paired by index), with a t interval over seeds."""
    geo = np.asarray(m["models"]["geonew"][key], dtype=float)
    base = np.asarray(m["models"]["regression"][key], dtype=float)
    if geo.shape != base.shape:
        raise ValueError(f"{key}: {geo.size} Geo-NeW seeds against {base.size} baseline seeds")
    return seed_interval(base - geo)


def _skill(model: str):
    """Per (seed, in-distribution test mesh): the model's relative L2 error against the best constant field's."""

    def measure(m: Mapping[str, Any]) -> Measured:
        per_mesh = np.asarray(m["models"][model]["id_error_per_mesh"], dtype=float)
        trivial = np.broadcast_to(np.asarray(m["trivial"]["id_error_per_mesh"], dtype=float), per_mesh.shape)
        return skill_over_trivial(per_mesh.ravel(), trivial.ravel())

    return measure


LEARNED = ("geonew_learned", "regression_learned")


def _check(claim_id: str, statement: str, test: Test, key: str, reported: str) -> ClaimSpec:
    """An exactness property of Geo-NeW read from its metrics entry ``key``."""
    return ClaimSpec(claim_id, "check", statement, test, lambda m: m["models"]["geonew"][key], reported=reported)


CLAIMS = [
    _check(
        "geonew_partition_of_unity",
        "The learned coarse functions (Dirichlet function included) sum to one at every fine node of every test "
        "mesh: largest |sum_i W_ia - 1| <= 1e-12 (softmax construction)",
        Test("<=", 1e-12),
        "pou_max_error",
        "exact_conservation",
    ),
    _check(
        "geonew_global_balance",
        "Coarse conservation from the Whitney edge fluxes at the returned solution, every test mesh and seed: "
        "|net flux into the Dirichlet boundary - total load| / total |load| <= 1e-8 (Newton tolerance)",
        Test("<=", 1e-8),
        "global_balance_max",
        "exact_conservation",
    ),
    _check(
        "geonew_local_conservation",
        "Per coarse cell balance sum_j F_ji = b_i at the returned solution: largest relative residual <= 1e-8",
        Test("<=", 1e-8),
        "local_residual_max",
        "exact_conservation",
    ),
    _check(
        "geonew_flux_jacobian_positive_definite",
        "The learned flux's Jacobian dF/dg is positive definite at random gradients on every test geometry: "
        "smallest eigenvalue > 0 (convex-potential parameterisation, >= eps by construction)",
        Test(">", 0.0),
        "min_jacobian_eigenvalue",
        "existence_uniqueness",
    ),
    _check(
        "geonew_newton_converges_everywhere",
        "Newton on the learned coarse problem converges on every test geometry (in and out of distribution, "
        "every seed): fraction converged >= 1",
        Test(">=", 1.0),
        "newton_converged_fraction",
        "existence_uniqueness",
    ),
    ClaimSpec(
        "geonew_smaller_ood_degradation",
        "paper",
        "Geometry generalisation: the out-of-distribution / in-distribution error ratio of Geo-NeW-lite is below "
        "the regression transformer's; per-seed difference (baseline - Geo-NeW), whole t interval over seeds > 0",
        Test(">", 0.0),
        lambda m: _per_seed_gap(m, "ood_id_ratio"),
        reported="ood_generalisation",
        rests_on=LEARNED,
    ),
    ClaimSpec(
        "geonew_lower_ood_error",
        "paper",
        "Out-of-distribution geometries (stronger warps, L-shape): Geo-NeW-lite's mean relative L2 error is below "
        "the regression transformer's; per-seed difference, whole t interval over seeds > 0",
        Test(">", 0.0),
        lambda m: _per_seed_gap(m, "ood_error"),
        reported="ood_generalisation",
        rests_on=LEARNED,
    ),
    ClaimSpec(
        "geonew_lower_id_error",
        "paper",
        "In-distribution accuracy against the baseline (the paper's state of the art on steady-state benchmarks): "
        "Geo-NeW-lite's mean relative L2 error on in-distribution test geometries is below the regression "
        "transformer's; per-seed difference (baseline - Geo-NeW), whole t interval over seeds > 0",
        Test(">", 0.0),
        lambda m: _per_seed_gap(m, "id_error"),
        reported="state_of_the_art",
        rests_on=LEARNED,
    ),
    learning_check(
        "geonew_learned",
        "Geo-NeW-lite",
        "the best constant field of the training meshes",
        _skill("geonew"),
        error="relative L2 error per in-distribution test mesh and seed",
    ),
    learning_check(
        "regression_learned",
        "the regression transformer",
        "the best constant field of the training meshes",
        _skill("regression"),
        error="relative L2 error per in-distribution test mesh and seed",
    ),
]
