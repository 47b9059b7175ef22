"""JanusPipe's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, bootstrap_interval


def speedup(m: Mapping[str, Any], baseline: str) -> float:
    """Simulated makespan of ``baseline`` over JanusPipe's (> 1: JanusPipe is faster)."""
    return float(m["makespan_s"][baseline] / m["makespan_s"]["janus"])


def measured_speedup(m: Mapping[str, Any]) -> Measured:
    """Measured CPU step time of 1F1B over the folded schedule's, with a bootstrap interval over steps
    (the first step of each is warm-up and left out)."""
    a = np.asarray(m["measured_step_seconds"]["1f1b"], float)[1:]
    b = np.asarray(m["measured_step_seconds"]["janus"], float)[1:]
    return bootstrap_interval([a, b], lambda x, y: float(np.median(x) / np.median(y)), n_resamples=2000)


CLAIMS = [
    ClaimSpec(
        "januspipe_simulator_closed_form",
        "check",
        "With uniform costs the simulator reproduces the GPipe and 1F1B bubble (S-1)/(M+S-1) for every (S, M) "
        "of the grid: largest absolute error <= 1e-12",
        Test("<=", 1e-12),
        lambda m: float(m["closed_form_max_error"]),
    ),
    ClaimSpec(
        "januspipe_decomposition_exact",
        "check",
        "The stage-decomposed four-phase execution with explicit boundary VJPs, run as a two-process gloo "
        "pipeline (1F1B and folded), gives the forces, parameter gradients and (after the steps) weights of "
        "monolithic autograd, float64: largest relative error <= 1e-10",
        Test("<=", 1e-10),
        lambda m: float(m["decomposition_max_rel_error"]),
    ),
    ClaimSpec(
        "januspipe_double_backward_dominates",
        "paper",
        "Conservative MLIP training is dominated by the backward phases: measured (B1 + B2a + B2b) / F time of "
        "the small EMT-trained MLIP on this machine's CPU (summed over the stages of the 1F1B split) > 2",
        Test(">", 2.0),
        lambda m: float(m["backward_to_forward_ratio"]),
    ),
    ClaimSpec(
        "januspipe_faster_than_1f1b_simulated",
        "paper",
        "Simulated with this machine's measured phase costs (S = 4 devices, M = 8 micro-batches, communication "
        "not modelled): 1F1B makespan / JanusPipe-like (SymFold + WaveK) makespan > 1 (the paper's 1.51 is a "
        "32-GPU measurement, not comparable)",
        Test(">", 1.0),
        lambda m: speedup(m, "1f1b"),
        reported="throughput_speedup_vs_1f1b_32gpu",
    ),
    ClaimSpec(
        "januspipe_faster_than_hanayo_simulated",
        "paper",
        "Simulated as above: Hanayo-like (wave placement, equal layers per chunk) makespan / JanusPipe-like "
        "makespan > 1 (the paper's 1.45 is a 32-GPU measurement)",
        Test(">", 1.0),
        lambda m: speedup(m, "hanayo"),
        reported="throughput_speedup_vs_hanayo_32gpu",
    ),
    ClaimSpec(
        "januspipe_memory_not_above_1f1b",
        "paper",
        "SymFold is memory-efficient: simulated peak activation bytes on the busiest device, JanusPipe-like / "
        "1F1B <= 1 (saved-tensor bytes measured per stage)",
        Test("<=", 1.0),
        lambda m: float(m["peak_memory_bytes"]["janus"] / m["peak_memory_bytes"]["1f1b"]),
    ),
    ClaimSpec(
        "januspipe_faster_than_1f1b_measured_cpu",
        "paper",
        "Measured, not simulated, on CPU: the real two-process gloo pipeline's median step time, 1F1B / folded "
        "JanusPipe-like > 1 (bootstrap 95% interval over steps; tiny model, so message latency weighs heavily)",
        Test(">", 1.0),
        measured_speedup,
        reported="throughput_speedup_vs_1f1b_32gpu",
    ),
    ClaimSpec(
        "januspipe_speedup_vs_1f1b_full",
        "paper",
        "Full scale: simulated 1F1B / JanusPipe-like makespan with measured GPU phase costs within ±0.15 of the "
        "paper's 1.51 (32 GPUs)",
        Test("within", 1.51, abs_tol=0.15),
        lambda m: speedup(m, "1f1b"),
        reported="throughput_speedup_vs_1f1b_32gpu",
        scales=("full",),
    ),
    ClaimSpec(
        "januspipe_speedup_vs_hanayo_full",
        "paper",
        "Full scale: simulated Hanayo-like / JanusPipe-like makespan within ±0.15 of the paper's 1.45 (32 GPUs)",
        Test("within", 1.45, abs_tol=0.15),
        lambda m: speedup(m, "hanayo"),
        reported="throughput_speedup_vs_hanayo_32gpu",
        scales=("full",),
    ),
]
