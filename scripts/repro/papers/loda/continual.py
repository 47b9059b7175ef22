"""One continual sequence of tasks for one method: LoRA branches set up per task, trained, merged.

Methods (``METHODS``): ``seq_lora`` (plain LoRA, A and B trained, merged after each task), ``inflora`` (A fixed
to null-space bases of the old tasks' inputs, B trained), ``loda`` (general and isolated branches with fixed
down-projections from the two energy objectives, GAO on the up-projections, closed-form recalibration of the
general update before merging), its ablations, and ``joint`` (one LoRA on every task at once, the upper bound).
Every per-task training runs in the shared loop with a checkpoint, so a killed run resumes task by task.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from repro.learning.smallnets import Task
from repro.learning.training import epoch_rng, fingerprint_of, train
from repro.papers.loda import subspaces as sp
from repro.papers.loda.gao import GAOOptimizer, gao_loss
from repro.papers.loda.lora import LoRALinear, layer_inputs, wrap_linears


@dataclass(frozen=True)
class Method:
    """How a method builds its branches: kind seq | null | loda | joint, and LoDA's switches."""

    kind: str
    general: bool = True
    isolated: bool = True
    recalibrate: bool = True
    gao: bool = True
    isolated_from_null_space: bool = False
    matched_rank: bool = False  # without the general branch, the isolated branch takes its rank too


METHODS = {
    "seq_lora": Method("seq"),
    "inflora": Method("null"),
    "loda": Method("loda"),
    "loda_no_general": Method("loda", general=False, matched_rank=True),
    "loda_no_recalibration": Method("loda", recalibrate=False),
    "loda_no_gao": Method("loda", gao=False),
    "loda_null_isolated": Method("loda", isolated_from_null_space=True),
    "joint": Method("joint"),
}


@dataclass
class SequenceResult:
    """acc[j, i]: accuracy on task i after task j (joint: every row is the one joint model); diagnostics per
    (task, layer): energies of the bases and, for LoDA, the moments and recalibration systems."""

    acc: np.ndarray
    energies: list[dict[str, float]]
    systems: list[dict[str, np.ndarray]]
    # per test item of each task (in task order), right after training on that task: did it learn the task
    learned_correct: np.ndarray | None = None


def criterion(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(x), y)


def correct(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    model.eval()
    with torch.no_grad():
        return (model(x).argmax(1) == y).numpy()


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    return float(np.mean(correct(model, x, y)))


def batches_of(x: torch.Tensor, y: torch.Tensor, batch_size: int, seed: int) -> Callable[[int], list]:
    def batches(epoch: int) -> list:
        order = torch.as_tensor(epoch_rng(seed, epoch).permutation(len(y)))
        return [(x[order[i : i + batch_size]], y[order[i : i + batch_size]]) for i in range(0, len(y), batch_size)]

    return batches


def task_seed(seed: int, task: int) -> int:
    """The seed of one task's training, the same for every method (paired comparisons)."""
    return int(np.random.SeedSequence([int(seed), int(task)]).generate_state(1)[0])


class ContinualRun:
    """Runs ``method`` over ``tasks`` from a pretrained backbone (merged in place after each task)."""

    def __init__(self, backbone: nn.Module, method: str, settings: dict, seed: int, pretrain_x: torch.Tensor):
        if method not in METHODS:
            raise ValueError(f"unknown LoDA-paper method {method!r}; expected one of {sorted(METHODS)}")
        self.model, self.name, self.method = backbone, method, METHODS[method]
        self.settings, self.seed = settings, int(seed)
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.layers = wrap_linears(self.model)
        # Old-task moments start from the pretraining domain: S^{1:t-1} exists from the first task on.
        self.s_old = {n: sp.second_moment(v) for n, v in layer_inputs(self.model, self.layers, pretrain_x).items()}
        self.n_old = 1

    def _branches(self, t: int, x: torch.Tensor, gen: torch.Generator) -> tuple[dict, list[dict], dict]:
        """Add this task's branches to every layer; returns per-layer new-task moments and energy rows."""
        cfg, m = self.settings, self.method
        rank = cfg["rank_general"] + cfg["rank_isolated"]
        rank_isolated = rank if m.matched_rank and not m.general else cfg["rank_isolated"]
        s_new = {n: sp.second_moment(v) for n, v in layer_inputs(self.model, self.layers, x).items()}
        rows, systems = [], {}
        for name, layer in self.layers.items():
            old, new = self.s_old[name] / self.n_old, s_new[name]
            if m.kind in ("seq", "joint"):
                layer.add_branch("lora", None, rank, gen)
                continue
            null = sp.null_space_basis(old, new, rank_isolated if m.kind == "loda" else rank, cfg["null_threshold"])
            if m.kind == "null":
                layer.add_branch("null", null.T, rank, gen)
                continue
            general = sp.general_basis(old, new, cfg["rank_general"])
            isolated = sp.isolated_basis(old, new, rank_isolated, cfg["eps"])
            top = float(torch.linalg.eigvalsh(new)[-rank_isolated:].sum())
            rows.append(
                {"task": t, "layer": name, "new_energy_top": top}
                | {
                    f"new_{k}": sp.energy(u, new)
                    for k, u in (("general", general), ("isolated", isolated), ("null", null))
                }
                | {
                    f"old_{k}": sp.energy(u, old)
                    for k, u in (("general", general), ("isolated", isolated), ("null", null))
                }
            )
            systems[name] = {
                "s_old": old.numpy(),
                "s_new": new.numpy(),
                "isolated": isolated.numpy(),
                "general": general.numpy(),
            }
            if m.general:
                layer.add_branch("general", general.T, cfg["rank_general"], gen)
            if m.isolated:
                layer.add_branch("isolated", (null if m.isolated_from_null_space else isolated).T, rank_isolated, gen)
        return s_new, rows, systems

    def _merge(self, s_new: dict, systems: dict) -> None:
        cfg = self.settings
        for name, layer in self.layers.items():
            scales = {}
            if self.method.kind == "loda" and self.method.recalibrate and "general" in layer.downs:
                m, b = sp.recalibration_system(
                    layer.ups["general"].detach(),
                    layer.downs["general"],
                    self.s_old[name] / self.n_old,
                    s_new[name],
                    cfg["w_general"],
                )
                lam = sp.recalibrate(m, b)
                scales["general"] = lam
                systems[name] |= {"system": m.numpy(), "rhs": b.numpy(), "scale": lam.numpy()}
            layer.merge(scales)

    def _fit(self, t: int, x: torch.Tensor, y: torch.Tensor, checkpoint: Path | None, fingerprint: str) -> None:
        cfg = self.settings
        params = [p for layer in self.layers.values() for p in layer.parameters() if p.requires_grad]
        inner = torch.optim.Adam(params, lr=cfg["lr"])
        use_gao = self.method.kind == "loda" and self.method.gao
        optimizer = GAOOptimizer(inner, params, cfg["rho_max"]) if use_gao else inner
        loss = gao_loss(optimizer, criterion) if use_gao else (lambda model, b: criterion(model, *b))
        seed = task_seed(self.seed, t)
        train(
            self.model,
            loss,
            batches_of(x, y, cfg["batch_size"], seed),
            epochs=cfg["epochs"],
            optimizer=optimizer,
            checkpoint=checkpoint,
            checkpoint_every=cfg["epochs"],
            fingerprint=fingerprint,
            desc=f"{self.name} seed {self.seed} task {t}",
            seed=seed,
            keep_last=True,
        )

    def run(
        self, tasks: list[Task], checkpoints: str | os.PathLike | None = None, fingerprint: str = ""
    ) -> SequenceResult:
        k = len(tasks)
        acc = np.zeros((k, k))
        energies: list[dict[str, float]] = []
        systems: list[dict[str, np.ndarray]] = []
        learned: list[np.ndarray] = []
        ckpt_dir = Path(checkpoints) if checkpoints else None
        gen = torch.Generator().manual_seed(self.seed)
        sequence = (
            [
                Task(
                    torch.cat([t.x_train for t in tasks]),
                    torch.cat([t.y_train for t in tasks]),
                    tasks[0].x_test,
                    tasks[0].y_test,
                )
            ]
            if self.method.kind == "joint"
            else tasks
        )
        for t, task in enumerate(sequence):
            s_new, rows, layer_systems = self._branches(t, task.x_train, gen)
            ckpt = ckpt_dir / f"{self.name}_{self.seed}_{t}.pt" if ckpt_dir else None
            self._fit(
                t,
                task.x_train,
                task.y_train,
                ckpt,
                fingerprint_of({"fp": fingerprint, "method": self.name, "seed": self.seed, "task": t}),
            )
            self._merge(s_new, layer_systems)
            for name in self.layers:
                self.s_old[name] = self.s_old[name] + s_new[name]
            self.n_old += 1
            energies.extend(rows)
            systems.append({f"{layer}/{key}": v for layer, d in layer_systems.items() for key, v in d.items()})
            for i, other in enumerate(tasks):
                hits = correct(self.model, other.x_test, other.y_test)
                acc[t, i] = float(np.mean(hits))
                if i == t or self.method.kind == "joint":
                    learned.append(hits)
        if self.method.kind == "joint":
            acc[:] = acc[0]
        return SequenceResult(acc, energies, systems, np.concatenate(learned))


__all__ = ["METHODS", "ContinualRun", "LoRALinear", "SequenceResult", "Task"]
