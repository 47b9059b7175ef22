"""Neural Control's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

Every optimiser trains the same controller network u_Theta(lambda); its learning check per task compares the best
loss it realised with the loss of the untrained controller it starts from (the same start for every method), over
(case, seed). The learned equilibrium model's check compares its held-out midpoint error with the training mean's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, learning_check, seed_interval, skill_over_trivial
from repro.reporting.registry import REPO_ROOT, load_reported

PAPER = load_reported(REPO_ROOT / "resources/neural-control/reported.yaml")
TASK_KEYS = {"t1": "task1_node_targeting", "t2": "task2_midpoint_tracking", "t3": "task3_shape_formation"}
LABELS = {"adjoint_rhc": "Adjoint+RHC", "adjoint_only": "Adjoint-only", "spsa": "SPSA", "cem": "CEM"}
DEQ_METHODS = ("adjoint_rhc", "spsa", "cem")


def learned_id(method: str, task: str) -> str:
    return f"nc_{method}_learned_{task}"


def deq_learned_id(method: str) -> str:
    return f"nc_deq_{method}_learned"


def _controller_skill(task: str, method: str) -> Callable[[Mapping[str, Any]], Measured]:
    """Per (case, seed): the best loss ``method`` realised against the untrained controller's loss."""

    def measure(m: Mapping[str, Any]) -> Measured:
        t = m["tasks"][task]
        return skill_over_trivial(t["methods"][method]["best_loss"], t["initial_loss"])

    return measure


def _deq_controller_skill(method: str) -> Callable[[Mapping[str, Any]], Measured]:
    def measure(m: Mapping[str, Any]) -> Measured:
        learned = m["learned"]
        return skill_over_trivial(learned["methods"][method]["best_loss"], learned["initial_loss"])

    return measure


def _deq_model_skill(m: Mapping[str, Any]) -> Measured:
    learned = m["learned"]
    return skill_over_trivial(learned["heldout_sq_error"], learned["heldout_sq_error_of_mean"])


def _advantage(task: str, baseline: str) -> Callable[[Mapping[str, Any]], Measured]:
    """Per seed: log10(baseline's median-over-cases best loss / Adjoint+RHC's), with a t interval over seeds."""

    def measure(m: Mapping[str, Any]) -> Measured:
        methods = m["tasks"][task]["methods"]
        rhc = np.asarray(methods["adjoint_rhc"]["median_loss_per_seed"], dtype=float)
        base = np.asarray(methods[baseline]["median_loss_per_seed"], dtype=float)
        return seed_interval(np.log10(base) - np.log10(rhc))

    return measure


def _learned_advantage(baseline: str) -> Callable[[Mapping[str, Any]], Measured]:
    """Per seed: log10(baseline's / Adjoint+RHC's median-over-cases tracking loss through the learned model)."""

    def measure(m: Mapping[str, Any]) -> Measured:
        methods = m["learned"]["methods"]
        rhc = np.asarray(methods["adjoint_rhc"]["median_loss_per_seed"], dtype=float)
        return seed_interval(
            np.log10(np.asarray(methods[baseline]["median_loss_per_seed"], dtype=float)) - np.log10(rhc)
        )

    return measure


def _branch_gain(m: Mapping[str, Any]) -> float:
    methods = m["tasks"]["t3"]["methods"]
    return float(methods["adjoint_rhc"]["branch_success"] - methods["adjoint_only"]["branch_success"])


def _loss_order(task: str) -> Callable[[Mapping[str, Any]], float]:
    return lambda m: float(np.log10(m["tasks"][task]["methods"]["adjoint_rhc"]["mean_loss"]))


def _beats(task: str, baseline: str, label: str) -> ClaimSpec:
    return ClaimSpec(
        f"nc_rhc_beats_{baseline}_{task}",
        "paper",
        f"{task.upper()} at an equal budget of equilibrium solves: Adjoint+RHC's best loss (median over cases) is "
        f"below {label}'s; log10 ratio {label}/RHC per seed, whole t interval over seeds > 0",
        Test(">", 0.0),
        _advantage(task, baseline),
        reported=f"best_loss_{TASK_KEYS[task]}_baseline_{'icem' if baseline == 'cem' else baseline}",
        rests_on=(learned_id("adjoint_rhc", task), learned_id(baseline, task)),
    )


CLAIMS = [
    ClaimSpec(
        "nc_adjoint_matches_finite_differences",
        "check",
        "Adjoint sensitivity S^T v equals central finite differences of re-solved equilibria (inside one basin): "
        "largest relative error <= 1e-5",
        Test("<=", 1e-5),
        lambda m: m["fd_max_relative_error"],
    ),
    ClaimSpec(
        "nc_adjoint_memory_flat",
        "check",
        "Memory of the adjoint gradient does not grow with the Newton iterations of the forward solve: autograd "
        "saved bytes at the most / fewest iterations (5 -> 50 at smoke scale) <= 1.1. A check of the "
        "implementation: the adjoint differentiates the equilibrium condition once, whatever the iterations",
        Test("<=", 1.1),
        lambda m: m["adjoint_memory_growth"],
    ),
    ClaimSpec(
        "nc_unrolled_memory_grows",
        "check",
        "Unrolled autograd through Newton grows in memory with the iterations: growth of saved bytes / growth of "
        "iterations >= 0.5 (linear growth gives 1). A check: autograd keeps every unrolled iteration's graph",
        Test(">=", 0.5),
        lambda m: m["unrolled_memory_growth"] / m["newton_iteration_ratio"],
    ),
    _beats("t1", "spsa", "SPSA"),
    _beats("t1", "cem", "CEM"),
    _beats("t2", "spsa", "SPSA"),
    _beats("t2", "cem", "CEM"),
    _beats("t3", "spsa", "SPSA"),
    _beats("t3", "cem", "CEM"),
    ClaimSpec(
        "nc_rhc_branch_success",
        "paper",
        "T3 (multistable): Adjoint+RHC ends on the target's branch at least as often as Adjoint-only (success rate "
        "difference over cases and seeds >= 0)",
        Test(">=", 0.0),
        _branch_gain,
        rests_on=(learned_id("adjoint_rhc", "t3"), learned_id("adjoint_only", "t3")),
    ),
    ClaimSpec(
        "nc_deq_implicit_gradients_match_fd",
        "check",
        "DEQ-style learned equilibrium model: implicit-function-theorem gradients (of the fitting loss in the "
        "parameters and of the tracking loss in the controls) equal central finite differences: largest relative "
        "error <= 1e-5",
        Test("<=", 1e-5),
        lambda m: np.max(
            np.array(
                [m["learned"]["ift_fd_relative_error_parameters"], m["learned"]["ift_fd_relative_error_controls"]],
                dtype=float,
            )
        ),
    ),
    ClaimSpec(
        "nc_deq_fits_heldout_equilibria",
        "check",
        "The learned equilibrium model (fitted to rod equilibria, a stand-in for the paper's slinky force-strain "
        "data) reproduces held-out equilibria: RMS midpoint error / RMS spread of the midpoints <= 0.1",
        Test("<=", 0.1),
        lambda m: m["learned"]["heldout_relative_error"],
    ),
    ClaimSpec(
        "nc_deq_segment_loss",
        "paper",
        "Tracking through the learned equilibrium model with Adjoint+RHC reaches the paper's segment losses (slinky "
        "DEQ: 1e-8 to 1e-11; here the model fitted to rod equilibria, reachable targets): median over cases and "
        "seeds of the largest executed segment loss <= 1e-8",
        Test("<=", 1e-8),
        lambda m: m["learned"]["methods"]["adjoint_rhc"]["max_segment_loss_median"],
        reported="slinky_segment_loss_max",
        rests_on=("nc_deq_model_learned", deq_learned_id("adjoint_rhc")),
    ),
    ClaimSpec(
        "nc_deq_rhc_beats_spsa",
        "paper",
        "Through the learned equilibrium model at an equal budget of fixed-point solves: Adjoint+RHC's tracking loss "
        "(median over cases) is below SPSA's; log10 ratio SPSA/RHC per seed, whole t interval over seeds > 0",
        Test(">", 0.0),
        _learned_advantage("spsa"),
        rests_on=("nc_deq_model_learned", deq_learned_id("adjoint_rhc"), deq_learned_id("spsa")),
    ),
    ClaimSpec(
        "nc_deq_rhc_beats_cem",
        "paper",
        "Through the learned equilibrium model at an equal budget of fixed-point solves: Adjoint+RHC's tracking loss "
        "(median over cases) is below CEM's; log10 ratio CEM/RHC per seed, whole t interval over seeds > 0",
        Test(">", 0.0),
        _learned_advantage("cem"),
        rests_on=("nc_deq_model_learned", deq_learned_id("adjoint_rhc"), deq_learned_id("cem")),
    ),
    *[
        ClaimSpec(
            f"nc_full_loss_order_{task}",
            "paper",
            f"Full scale, {task.upper()}: Adjoint+RHC's mean best loss within one order of magnitude of the paper's "
            f"(log10 within +-1 of log10 {PAPER[f'best_loss_{key}']['value']:g})",
            Test("within", float(np.log10(PAPER[f"best_loss_{key}"]["value"])), abs_tol=1.0),
            _loss_order(task),
            reported=f"best_loss_{key}",
            scales=("full",),
            rests_on=(learned_id("adjoint_rhc", task),),
        )
        for task, key in TASK_KEYS.items()
    ],
    *[
        learning_check(
            learned_id(method, task),
            f"the controller trained by {label} on {task.upper()}",
            "the untrained controller it starts from",
            _controller_skill(task, method),
            error="realised task loss per (case, seed)",
        )
        for task in TASK_KEYS
        for method, label in LABELS.items()
    ],
    learning_check(
        "nc_deq_model_learned",
        "the learned equilibrium model (fitted to rod equilibria)",
        "the training paths' mean midpoint",
        _deq_model_skill,
        error="squared midpoint error per held-out equilibrium",
    ),
    *[
        learning_check(
            deq_learned_id(method),
            f"the controller trained by {LABELS[method]} through the learned equilibrium model",
            "the untrained controller it starts from",
            _deq_controller_skill(method),
            error="tracking loss per (case, seed)",
        )
        for method in DEQ_METHODS
    ],
]
