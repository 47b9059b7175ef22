"""Stage: measured phase costs, then the real two-process gloo pipeline for 1F1B and the folded schedule.

1. Unit costs: every unit (descriptor, each layer) as its own stage, the four phases timed (costs.py).
2. Plans: the splits the simulator compares at ``simulate.devices`` devices (uniform linear, uniform
   folded, WaveK-balanced folded and linear), each re-measured as whole stages (per-call overheads do not
   add up across merged units, so simulated stage costs are measured, not summed).
3. The real pipeline at ``pipeline.processes`` processes: 1F1B (linear, equal units per stage) and
   JanusPipe (folded, WaveK split, waves of K), task orders from the simulator fed the measured costs,
   run for ``steps`` steps from the trained weights; forces and gradients of the first step and the final
   weights are compared with monolithic autograd (same batches, same Adam).
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import numpy as np
import torch

from repro.learning.training import epoch_rng
from repro.papers.januspipe import costs, dataset
from repro.papers.januspipe.distributed import launch
from repro.papers.januspipe.model import linears, monolithic, transfer
from repro.papers.januspipe.schedule import placement, simulate, uniform_split, wavek_split
from repro.papers.januspipe.train import build
from repro.workflow.io import write_json

log = logging.getLogger(__name__)


def measure_plans(base, data, idx_batches, settings, n_devices) -> dict:
    """Unit costs (which choose WaveK's splits), then measured stage costs and memory of each plan.

    The plans are measured interleaved: each round times one micro-batch through every plan's model before
    the next round, and medians are taken over rounds, so a burst of load from other processes on a shared
    machine hits every plan alike instead of inflating whichever plan it coincides with.
    """
    units = settings["model"]["layers"] + 1
    weights = settings["train"]["weights"]
    batches = [dataset.batch(data, i) for i in idx_batches]
    unit_costs, unit_memory = costs.measure(transfer(base, build(settings, [1] * units)), batches, weights)
    splits = {
        "linear_uniform": uniform_split(units, n_devices),
        "folded_uniform": uniform_split(units, 2 * n_devices),
        "folded_wavek": wavek_split(unit_costs, n_devices, "folded"),
        "linear_wavek": wavek_split(unit_costs, n_devices, "linear"),
    }
    models = {name: transfer(base, build(settings, split)) for name, split in splits.items()}
    runs = costs.interleaved(models, batches, weights)
    plans = {
        name: {"split": splits[name], "costs": c.tolist(), "memory_bytes": mem.tolist(), "costs_per_repeat": r.tolist()}
        for name, (c, mem, r) in runs.items()
    }
    return {"unit_costs": unit_costs.tolist(), "unit_memory_bytes": unit_memory.tolist(), "plans": plans}


def real_plans(base, data, idx_batches, settings) -> dict:
    """The two schedules the processes run: orders from the simulator on costs measured for each split."""
    cfg = settings["pipeline"]
    d = cfg["processes"]
    measured = measure_plans(base, data, idx_batches, settings, d)
    out = {}
    for name, kind, key, policy in (
        ("1f1b", "linear", "linear_uniform", "1f1b"),
        ("janus", "folded", "folded_wavek", "wave"),
    ):
        plan = measured["plans"][key]
        devices = placement(kind, d)
        sim = simulate(np.asarray(plan["costs"]), devices, cfg["micro_batches"], policy, wave=cfg["wave"])
        out[name] = {"split": plan["split"], "devices": devices, "order": [sim.order(r) for r in range(d)],
                     "simulated_makespan": sim.makespan}  # fmt: skip
    return out


def reference(base, data, steps, settings) -> dict:
    """Monolithic autograd on the same micro-batches: first step's forces and gradients, final weights."""
    model = transfer(base, build(settings))
    optimizer = torch.optim.Adam(model.parameters(), lr=settings["pipeline"]["lr"])
    weights = settings["train"]["weights"]
    first = {}
    for step, micro in enumerate(steps):
        optimizer.zero_grad()
        for m, idx in enumerate(micro):
            loss, _, forces = monolithic(model, dataset.batch(data, idx), weights)
            (loss / len(micro)).backward()
            if step == 0:
                first.setdefault("forces", {})[m] = forces.detach()
        if step == 0:
            first["grads"] = [p.grad.clone() for layer in linears(model) for p in layer.parameters()]
        optimizer.step()
    first["final"] = [p.detach().clone() for layer in linears(model) for p in layer.parameters()]
    return first


def flat_by_layer(records: list[dict], key: str) -> list[torch.Tensor]:
    """Per-stage tensors from every rank's record, in stage order, as one flat list of layer tensors."""
    merged = {}
    for r in records:
        merged.update(r[key])
    return [t for k in sorted(merged) for t in merged[k]]


def relative_error(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    return float(
        np.max([((x - y).abs().max() / y.abs().max().clamp_min(1e-300)).item() for x, y in zip(a, b, strict=True)])
    )


def main(job) -> None:
    settings, seed = job.params.settings, int(job.params.seed)
    cfg = settings["pipeline"]
    # Phase costs are measured on one thread: each pipeline process runs one (the rule's threads are the processes).
    torch.set_num_threads(1)
    data = dataset.load(job.input.configs)
    state = torch.load(job.input.model, weights_only=True)
    base = build(settings)
    base.load_state_dict(state["state"])
    train_idx = np.flatnonzero(data["split"] == 0)
    mb = settings["costs"]["micro_batch"]
    timing_batches = [
        epoch_rng(seed, 1000 + i).choice(train_idx, mb, replace=False) for i in range(settings["costs"]["repeats"])
    ]
    simulated = measure_plans(base, data, timing_batches, settings, settings["simulate"]["devices"])
    plans = real_plans(base, data, timing_batches, settings)
    steps = [[epoch_rng(seed, s).choice(train_idx, cfg["micro_batch"], replace=False) for _ in range(cfg["micro_batches"])]
             for s in range(cfg["steps"])]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        launch(cfg["processes"], {"plans": plans, "state": state["state"], "settings": settings, "data": data,
                                  "steps": steps}, Path(tmp))  # fmt: skip
        records = {
            name: [torch.load(Path(tmp) / f"rank{r}_{name}.pt", weights_only=True) for r in range(cfg["processes"])]
            for name in plans
        }
    ref = reference(base, data, steps, settings)
    structures = cfg["micro_batches"] * cfg["micro_batch"]
    measured = {}
    for name, recs in records.items():
        step_seconds = np.max([r["step_seconds"] for r in recs], axis=0)
        forces = recs[0]["forces"]
        measured[name] = {
            "split": plans[name]["split"],
            "devices": plans[name]["devices"],
            "order": plans[name]["order"],
            "simulated_makespan_s": plans[name]["simulated_makespan"],
            "step_seconds": step_seconds.tolist(),
            "throughput_structures_per_s": structures
            / float(np.median(step_seconds[1:] if len(step_seconds) > 1 else step_seconds)),
            "force_max_abs_error": float(np.max([(forces[m] - ref["forces"][m]).abs().max().item() for m in forces])),
            "grad_max_rel_error": relative_error(flat_by_layer(recs, "grads"), ref["grads"]),
            "final_weight_max_rel_error": relative_error(flat_by_layer(recs, "final"), ref["final"]),
        }
        log.info("%s: %.1f structures/s", name, measured[name]["throughput_structures_per_s"])
    write_json(job.output.costs, simulated)
    write_json(
        job.output.pipeline, {"processes": cfg["processes"], "structures_per_step": structures, "plans": measured}
    )
