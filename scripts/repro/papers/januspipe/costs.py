"""Measured per-stage, per-phase wall times and held activation bytes of the stage-decomposed MLIP.

Each phase of each stage is timed on its own (``time.perf_counter`` around the stage's call, median over
``repeats`` micro-batches after a warm-up), in the order a pipeline runs them. Activation memory of a
stage is the bytes of the tensors autograd saves during its F and B1 phases (``saved_tensors_hooks``):
what the stage holds for a micro-batch until its B2b frees it.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from repro.papers.januspipe.model import MLIP, Batch, StageRunner, energy_adjoint, force_adjoint
from repro.papers.januspipe.schedule import PHASES


def one_pass(model: MLIP, batch: Batch, weights: dict) -> tuple[np.ndarray, np.ndarray]:
    """(stages, 4) seconds of every phase and (stages,) saved bytes for one micro-batch."""
    runners = [StageRunner(s, k, len(model.stages)) for k, s in enumerate(model.stages)]
    seconds = np.zeros((len(runners), len(PHASES)))
    saved = np.zeros(len(runners))
    current = [0]

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved[current[0]] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        h = batch.positions
        for r in runners:
            current[0] = r.index
            start = time.perf_counter()
            h = r.forward(h, batch)
            seconds[r.index, 0] = time.perf_counter() - start
        g = None
        for r in reversed(runners):
            current[0] = r.index
            start = time.perf_counter()
            g = r.force_backward(g)
            seconds[r.index, 1] = time.perf_counter() - start
    _, gbar = force_adjoint(g, batch, weights)
    for r in runners:
        start = time.perf_counter()
        gbar = r.double_backward_a(gbar)
        seconds[r.index, 2] = time.perf_counter() - start
    _, hbar = energy_adjoint(model, h, batch, weights)
    for r in reversed(runners):
        start = time.perf_counter()
        hbar, _ = r.double_backward_b(hbar)
        seconds[r.index, 3] = time.perf_counter() - start
    return seconds, saved


def measure(model: MLIP, batches: list[Batch], weights: dict, warmup: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Median phase seconds (stages, 4) over the batches after ``warmup`` passes, and saved bytes (stages,)."""
    for b in batches[:warmup]:
        one_pass(model, b, weights)
    runs = [one_pass(model, b, weights) for b in batches]
    return np.median([r[0] for r in runs], axis=0), np.median([r[1] for r in runs], axis=0)


def interleaved(models: dict[str, MLIP], batches: list[Batch], weights: dict, warmup: int = 2) -> dict:
    """:func:`measure` for several models at once, round-robin over the batches: {name: (median seconds, bytes,
    seconds of every repeat (repeats, stages, 4))}; the repeats are paired across models (same round)."""
    for b in batches[:warmup]:
        for model in models.values():
            one_pass(model, b, weights)
    runs: dict[str, list] = {name: [] for name in models}
    for b in batches:
        for name, model in models.items():
            runs[name].append(one_pass(model, b, weights))
    return {
        name: (
            np.median([r[0] for r in rs], axis=0),
            np.median([r[1] for r in rs], axis=0),
            np.stack([r[0] for r in rs]),
        )
        for name, rs in runs.items()
    }
