"""A real pipeline over torch.distributed (gloo, CPU): each process holds the stages its placement gives it
and runs its tasks in the order the simulator scheduled them, exchanging one boundary tensor per phase.

Sends are asynchronous (``isend``) and receives block; because every process follows a feasible schedule
of the same task graph, this cannot deadlock. Gradients are accumulated over the step's micro-batches
(mean loss), then each process's Adam updates its own stages. Each process writes its measured step
times, its first step's forces and gradients and its final weights to ``<out>/rank<r>_<plan>.pt``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from repro.papers.januspipe import dataset
from repro.papers.januspipe.model import MLIP, StageRunner, energy_adjoint, force_adjoint, transfer
from repro.papers.januspipe.schedule import PHASES


def out_dims(model: MLIP) -> list[int]:
    dims = []
    for stage in model.stages:
        linears = [m for m in stage.layers if isinstance(m, torch.nn.Linear)]
        dims.append(linears[-1].out_features if linears else stage.descriptor.n_out)
    return dims


class Wire:
    """Boundary transfers: a local buffer between stages on one process, gloo messages across processes."""

    def __init__(self, rank: int, devices: list[int], rows: int, dims: list[int], n_micro: int):
        self.rank, self.devices, self.rows, self.dims, self.n_micro = rank, devices, rows, dims, n_micro
        self.local: dict[tuple, torch.Tensor] = {}
        self.pending: list = []

    def tag(self, step: int, m: int, phase: str, stage: int) -> int:
        return ((step * self.n_micro + m) * len(PHASES) + PHASES.index(phase)) * len(self.devices) + stage

    def send(self, tensor: torch.Tensor, step: int, m: int, phase: str, to_stage: int) -> None:
        key = (step, m, phase, to_stage)
        if self.devices[to_stage] == self.rank:
            self.local[key] = tensor
        else:
            self.pending.append(dist.isend(tensor.contiguous(), self.devices[to_stage], tag=self.tag(*key)))

    def recv(self, step: int, m: int, phase: str, stage: int, from_stage: int, dim: int) -> torch.Tensor:
        key = (step, m, phase, stage)
        if self.devices[from_stage] == self.rank:
            return self.local.pop(key)
        buf = torch.empty(self.rows, dim, dtype=torch.float64)
        dist.recv(buf, self.devices[from_stage], tag=self.tag(*key))
        return buf

    def flush(self) -> None:
        for req in self.pending:
            req.wait()
        self.pending.clear()


def run_plan(rank: int, plan: dict, model_state: dict, settings: dict, data: dict, steps: list[list[np.ndarray]]):
    """Train ``len(steps)`` steps of M micro-batches with one plan; return this process's record."""
    from repro.papers.januspipe.train import build

    base = build(settings)
    base.load_state_dict(model_state)
    model = transfer(base, build(settings, plan["split"]))
    devices, order, weights = plan["devices"], plan["order"][rank], settings["train"]["weights"]
    mine = [k for k, d in enumerate(devices) if d == rank]
    params = [p for k in mine for p in model.stages[k].parameters()]
    optimizer = torch.optim.Adam(params, lr=settings["pipeline"]["lr"])
    n_micro = len(steps[0])
    rows = len(steps[0][0]) * data["positions"].shape[1]
    dims, last = out_dims(model), len(devices) - 1
    wire = Wire(rank, devices, rows, dims, n_micro)
    record = {"step_seconds": [], "forces": {}, "grads": {}}
    for step, micro in enumerate(steps):
        batches = [dataset.batch(data, idx) for idx in micro]
        runners = {(m, k): StageRunner(model.stages[k], k, len(devices)) for m in range(n_micro) for k in mine}
        grads = {k: [torch.zeros_like(p) for p in model.stages[k].parameters()] for k in mine}
        force_adjoints: dict[int, torch.Tensor] = {}
        dist.barrier()
        start = time.perf_counter()
        for m, phase, s in order:
            r, b = runners[(m, s)], batches[m]
            if phase == "F":
                h = b.positions if s == 0 else wire.recv(step, m, "F", s, s - 1, dims[s - 1])
                out = r.forward(h, b)
                if s < last:
                    wire.send(out, step, m, "F", s + 1)
                else:
                    r.atomic = out
            elif phase == "B1":
                g = None if s == last else wire.recv(step, m, "B1", s, s + 1, dims[s])
                g_in = r.force_backward(g)
                if s == 0:
                    forces, force_adjoints[m] = force_adjoint(g_in, b, weights)
                    if step == 0:
                        record["forces"][m] = forces
                else:
                    wire.send(g_in, step, m, "B1", s - 1)
            elif phase == "B2a":
                gbar = force_adjoints.pop(m) if s == 0 else wire.recv(step, m, "B2a", s, s - 1, dims[s - 1])
                out = r.double_backward_a(gbar)
                if s < last:
                    wire.send(out, step, m, "B2a", s + 1)
            else:
                if s == last:
                    _, hbar = energy_adjoint(model, r.atomic, b, weights)
                else:
                    hbar = wire.recv(step, m, "B2b", s, s + 1, dims[s])
                hbar_in, stage_grads = r.double_backward_b(hbar)
                for acc, g in zip(grads[s], stage_grads):
                    acc += g / n_micro
                if s > 0:
                    wire.send(hbar_in, step, m, "B2b", s - 1)
        wire.flush()
        for k in mine:
            for p, g in zip(model.stages[k].parameters(), grads[k]):
                p.grad = g
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        record["step_seconds"].append(time.perf_counter() - start)
        if step == 0:
            record["grads"] = {k: [g.clone() for g in grads[k]] for k in mine}
    record["final"] = {k: [p.detach().clone() for p in model.stages[k].parameters()] for k in mine}
    return record


def plain(obj):
    """``obj`` with numpy arrays as tensors and numpy scalars as Python numbers, so that it round-trips through
    ``torch.load(weights_only=True)`` (tensors and plain containers only: nothing in it can run code)."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj))
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(plain(v) for v in obj)
    return obj


def worker(rank: int, world: int, payload: str) -> None:
    """Process entry: join the gloo group, run every plan of the payload, save one record per plan."""
    torch.set_num_threads(1)
    job = torch.load(payload, weights_only=True)
    job["data"] = {k: v.numpy() for k, v in job["data"].items()}
    job["steps"] = [[idx.numpy() for idx in micro] for micro in job["steps"]]
    dist.init_process_group("gloo", init_method=f"file://{job['rendezvous']}", rank=rank, world_size=world)
    try:
        for name, plan in job["plans"].items():
            record = run_plan(rank, plan, job["state"], job["settings"], job["data"], job["steps"])
            torch.save(record, os.path.join(job["out"], f"rank{rank}_{name}.pt"))
    finally:
        dist.destroy_process_group()


def launch(world: int, payload: dict, folder: Path) -> None:
    """Start ``world`` fresh Python processes (not forks of this one, whose thread pools are live) and wait."""
    path = folder / "payload.pt"
    torch.save(plain(payload | {"rendezvous": str(folder / "rendezvous"), "out": str(folder)}), path)
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[3]), os.environ.get("PYTHONPATH", "")])
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "repro.papers.januspipe.distributed", str(r), str(world), str(path)], env=env
        )
        for r in range(world)
    ]
    codes = [p.wait() for p in procs]
    if any(codes):
        raise RuntimeError(f"pipeline processes exited with {codes}")


if __name__ == "__main__":
    worker(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
