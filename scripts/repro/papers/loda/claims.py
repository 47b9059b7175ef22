"""LoDA's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, learning_check, seed_interval, skill_of

STAND_IN = "Digits stand-in (MLP pretrained on clean sklearn digits, 5 domain-incremental tasks, LoRA on every layer)"


def _paired(a: str, b: str, metric: str = "a_last"):
    """Seed-paired difference a - b of a per-seed metric with its t interval."""

    def measure(m: Mapping[str, Any]) -> Measured:
        x = np.asarray(m["methods"][a][metric], dtype=float)
        y = np.asarray(m["methods"][b][metric], dtype=float)
        return seed_interval(x - y)

    return measure


def _energy_gap(m: Mapping[str, Any]) -> Measured:
    e = m["energy"]
    return seed_interval(np.asarray(e["new_share_isolated"], dtype=float) - np.asarray(e["new_share_null"], float))


LEARNED = {
    "loda": "LoDA",
    "inflora": "the InfLoRA-style null-space method",
    "seq_lora": "sequential LoRA",
    "loda_no_general": "LoDA without the general branch (isolated branch at the same total rank)",
    "loda_no_recalibration": "LoDA without recalibration",
}


def learn(method: str) -> str:
    return f"learn_{method}"


CLAIMS = [
    *[
        learning_check(
            learn(method),
            f"{name} (each task's model right after training on it)",
            "the class prior (most frequent training digit)",
            skill_of(method),
            error="0/1 error on each task's test images right after that task (mean over seeds)",
        )
        for method, name in LEARNED.items()
    ],
    ClaimSpec(
        "loda_isolated_is_generalised_eigenbasis",
        "check",
        "U_I spans the top generalised eigenvectors of scipy.linalg.eigh(S_t, S_old + eps I): largest principal "
        "angle over layers and tasks <= 1e-6 rad",
        Test("<=", 1e-6),
        lambda m: m["checks"]["isolated_max_principal_angle"],
        reported="decomposition",
    ),
    ClaimSpec(
        "loda_general_orthonormal",
        "check",
        "U_G has orthonormal columns: largest |U_G^T U_G - I| <= 1e-10",
        Test("<=", 1e-10),
        lambda m: m["checks"]["general_max_orthonormality_error"],
        reported="decomposition",
    ),
    ClaimSpec(
        "loda_recalibration_solves_least_squares",
        "check",
        "The recalibration scale solves its least-squares problem: relative normal-equation residual <= 1e-8",
        Test("<=", 1e-8),
        lambda m: m["checks"]["recalibration_max_residual"],
        reported="recalibration",
    ),
    ClaimSpec(
        "loda_beats_inflora",
        "paper",
        f"{STAND_IN}: LoDA's A_last minus the InfLoRA-style null-space method's, paired over seeds, >= 0 "
        "(whole 95% t interval)",
        Test(">=", 0.0),
        _paired("loda", "inflora"),
        reported="outperforms",
        rests_on=(learn("loda"), learn("inflora")),
    ),
    ClaimSpec(
        "loda_beats_sequential_lora",
        "paper",
        f"{STAND_IN}: LoDA's A_last minus sequential LoRA's, paired over seeds, > 0",
        Test(">", 0.0),
        _paired("loda", "seq_lora"),
        reported="outperforms",
        rests_on=(learn("loda"), learn("seq_lora")),
    ),
    ClaimSpec(
        "loda_forgets_less_than_sequential_lora",
        "paper",
        f"{STAND_IN}: LoDA's forgetting minus sequential LoRA's, paired over seeds, < 0",
        Test("<", 0.0),
        _paired("loda", "seq_lora", "forgetting"),
        reported="outperforms",
        rests_on=(learn("loda"), learn("seq_lora")),
    ),
    ClaimSpec(
        "loda_general_subspace_helps",
        "paper",
        "Ablation at equal adapter rank: removing the general branch U_G (its rank given to the isolated branch) "
        "lowers A_last (LoDA minus isolation-only, paired over seeds, > 0)",
        Test(">", 0.0),
        _paired("loda", "loda_no_general"),
        reported="ablations",
        rests_on=(learn("loda"), learn("loda_no_general")),
    ),
    ClaimSpec(
        "loda_recalibration_helps",
        "paper",
        "Ablation: removing the closed-form recalibration lowers A_last (LoDA minus no-recalibration, paired, > 0)",
        Test(">", 0.0),
        _paired("loda", "loda_no_recalibration"),
        reported="ablations",
        rests_on=(learn("loda"), learn("loda_no_recalibration")),
    ),
    ClaimSpec(
        "loda_null_bases_inactive",
        "paper",
        "Premise: the share of the best rank-r new-task energy captured by LoDA's U_I minus that captured by the "
        "null-space bases, mean over layers and tasks, paired over seeds, > 0",
        Test(">", 0.0),
        _energy_gap,
        reported="null_space_premise",
        rests_on=(),
    ),
]
