"""Stage: train Flower-lite, FNO-lite and U-Net-lite at matched parameter counts on each next-step task,
then predict next steps and autoregressive rollouts on the test trajectories.

Every model predicts the increment of the state over one frame from the state and the task's static
coefficients (velocity for advection, sound speed for waves), on per-channel normalised data.

Outputs:
- predictions.npz: ``<task>/truth`` test trajectories of the state, ``<task>/<model>/s<seed>/next``
  next-step predictions (sample, step, channel, y, x) from the true previous frame, ``.../rollout``
  autoregressive predictions from frame 0; ``advection/velocity`` and ``advection/flower/s<seed>/displacement``
  (the first SelfWarp's per-head displacements on the test inputs, for the interpretability check);
- training.json: parameter counts, histories, SelfWarp checks and forward times against grid size.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from repro.data.fields.store import open_fields, split_of
from repro.learning.fields_training import fit_arrays
from repro.learning.operators import baseline, count_parameters
from repro.learning.training import fingerprint_of
from repro.papers.flower.model import Flower, SelfWarp, warp
from repro.workflow.device import pick_device
from repro.workflow.fields_io import save_arrays
from repro.workflow.io import write_json


def task_fields(path: str, split: str) -> tuple[np.ndarray, np.ndarray]:
    """(state (sample, time, channel, y, x), static coefficients (sample, k, y, x)) of one split."""
    ds = split_of(open_fields(path), split)
    if "scalar" in ds:
        return ds.scalar.values[:, :, None], ds.velocity.values
    if "state" in ds and "speed" in ds:
        return ds.state.values, ds.speed.values[:, None]
    if "state" in ds:
        return ds.state.values, np.zeros((ds.sizes["sample"], 0, *ds.state.shape[-2:]), np.float32)
    if "u" in ds:
        u = ds.u.values[:, :, None, None, :]
        return u, np.zeros((len(u), 0, 1, u.shape[-1]), np.float32)
    raise ValueError(f"{path}: no known task variables in {sorted(ds.data_vars)}")


class Normaliser:
    """Per-channel statistics of the training states, statics and one-frame increments."""

    def __init__(self, state: np.ndarray, static: np.ndarray):
        axes = (0, 1, 3, 4)
        self.mean = state.mean(axis=axes)[None, :, None, None]
        self.std = state.std(axis=axes)[None, :, None, None] + 1e-6
        self.delta = np.diff(state, axis=1).std(axis=axes)[None, :, None, None] + 1e-6
        self.s_mean = static.mean(axis=(0, 2, 3))[None, :, None, None] if static.shape[1] else 0.0
        self.s_std = static.std(axis=(0, 2, 3))[None, :, None, None] + 1e-6 if static.shape[1] else 1.0

    def inputs(self, frame: np.ndarray, static: np.ndarray) -> np.ndarray:
        return np.concatenate([(frame - self.mean) / self.std, (static - self.s_mean) / self.s_std], axis=1)


def pairs(state: np.ndarray, static: np.ndarray, norm: Normaliser) -> tuple[np.ndarray, np.ndarray]:
    """Inputs (pair, in, y, x) and normalised increments (pair, c, y, x) for every consecutive frame pair."""
    frames = state.shape[1] - 1
    x = np.concatenate([norm.inputs(state[:, t], static) for t in range(frames)])
    y = np.concatenate([(state[:, t + 1] - state[:, t]) / norm.delta for t in range(frames)])
    return x.astype(np.float32), y.astype(np.float32)


def build(name: str, cin: int, cout: int, cfg: dict) -> torch.nn.Module:
    flower = Flower(cin, cout, width=cfg["width"], heads=cfg["heads"], levels=cfg["levels"], blocks=cfg["blocks"])
    if name == "flower":
        return flower
    extra = {"modes": cfg["fno_modes"]} if name == "fno" else {}
    return baseline(name, cin, cout, count_parameters(flower), **extra)


def mse_loss(model, batch) -> torch.Tensor:
    x, y = batch
    return torch.mean((model(x) - y) ** 2)


def fit(model, x, y, settings, seed, checkpoint, loss_fn=mse_loss, device=None, batch=None):
    """repro.learning.training.train with per-epoch batch order from epoch_rng; the model ends on the CPU.

    ``batch`` overrides the configured batch size (a task with many small samples uses larger batches)."""
    return fit_arrays(
        model,
        (x, y),
        loss_fn,
        train_cfg=settings["train"] | ({"batch": batch} if batch else {}),
        seed=seed,
        checkpoint=checkpoint,
        fingerprint=fingerprint_of(settings, [__file__]),
        desc=f"flower {type(model).__name__}",
        device=device,
    )


@torch.no_grad()
def step(model, frame: np.ndarray, static: np.ndarray, norm: Normaliser) -> np.ndarray:
    x = torch.from_numpy(norm.inputs(frame, static).astype(np.float32))
    return frame + model(x).numpy() * norm.delta


def predict(model, state: np.ndarray, static: np.ndarray, norm: Normaliser) -> tuple[np.ndarray, np.ndarray]:
    """Next-step predictions from every true frame, and the autoregressive rollout from frame 0."""
    nxt = np.stack([step(model, state[:, t], static, norm) for t in range(state.shape[1] - 1)], axis=1)
    roll, frame = [], state[:, 0]
    for _ in range(state.shape[1] - 1):
        frame = step(model, frame, static, norm)
        roll.append(frame)
    return nxt.astype(np.float32), np.stack(roll, axis=1).astype(np.float32)


@torch.no_grad()
def first_displacements(model: Flower, state: np.ndarray, static: np.ndarray, norm: Normaliser) -> np.ndarray:
    """The first SelfWarp's displacements (sample, head, 2, y, x) in cells, on the test inputs at frame 0."""
    z = model.lift(torch.from_numpy(norm.inputs(state[:, 0], static).astype(np.float32)))
    return model.first_warp().displacements(z).numpy()


@torch.no_grad()
def warp_checks(seed: int) -> dict[str, float]:
    """Zero displacement with identity projections is the identity; integer displacement is a roll."""
    gen = torch.Generator().manual_seed(seed)
    u = torch.randn(2, 8, 12, 16, generator=gen)
    layer = SelfWarp(8, 2)
    for lin in (layer.value, layer.mix):
        lin.weight.copy_(torch.eye(8))
        lin.bias.zero_()
    identity = float((layer(u) - u).abs().max())
    shift = torch.zeros(2, 2, 12, 16)
    shift[:, 0], shift[:, 1] = 3.0, -2.0
    roll = float((warp(u, shift) - torch.roll(u, shifts=(2, -3), dims=(2, 3))).abs().max())
    return {"identity_max_abs_diff": identity, "integer_roll_max_abs_diff": roll}


@torch.no_grad()
def forward_times(settings: dict, seed: int) -> dict:
    """Seconds per SelfWarp forward (batch 1, best of repeats) against the number of grid points."""
    cfg = settings["scaling"]
    torch.manual_seed(seed)
    layer = SelfWarp(settings["model"]["width"], settings["model"]["heads"])
    with torch.no_grad():
        layer.displacement[-1].weight.normal_(0, 0.5)
    seconds = []
    for n in cfg["grids"]:
        u = torch.randn(1, settings["model"]["width"], n, n)
        layer(u)
        best = float("inf")
        for _ in range(cfg["repeats"]):
            start = time.perf_counter()
            layer(u)
            best = min(best, time.perf_counter() - start)
        seconds.append(best)
    return {"points": [n * n for n in cfg["grids"]], "seconds": seconds}


def main(job) -> None:
    settings, seed0 = job.params.settings, int(job.params.seed)
    device = pick_device(job.params.device)
    ckpt_dir = Path(job.output.training).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    preds: dict[str, np.ndarray] = {}
    report: dict = {"parameters": {}, "history": {}}
    for task, path in (("advection", job.input.advection), ("wave", job.input.wave), ("burgers", job.input.burgers)):
        state, static = task_fields(path, "train")
        test_state, test_static = task_fields(path, "test")
        norm = Normaliser(state, static)
        x, y = pairs(state, static, norm)
        preds[f"{task}/truth"] = test_state
        if task == "advection" and test_static.shape[1] == 2:
            preds["advection/velocity"] = test_static
            preds["advection/frame_dt_cells"] = np.float32(open_fields(path).attrs["dt"] * test_state.shape[-1])
        seeds = settings["seeds"] if task in settings["seeded_tasks"] else settings["seeds"][:1]
        for name in settings["models"]:
            for s in seeds:
                seed = seed0 + s
                torch.manual_seed(seed)
                model = build(name, x.shape[1], y.shape[1], settings["model"])
                ckpt = ckpt_dir / f"{task}_{name}_{s}.pt"
                result = fit(
                    model, x, y, settings, seed, ckpt, device=device, batch=settings["tasks"][task].get("batch")
                )
                ckpt.unlink(missing_ok=True)
                key = f"{task}/{name}/s{s}"
                report["parameters"][f"{task}/{name}"] = count_parameters(model)
                report["history"][key] = result.history
                preds[f"{key}/next"], preds[f"{key}/rollout"] = predict(model, test_state, test_static, norm)
                if name == "flower" and task == "advection" and "advection/velocity" in preds:
                    preds[f"{key}/displacement"] = first_displacements(model, test_state, test_static, norm)
    report["checks"] = warp_checks(seed0)
    report["forward_times"] = forward_times(settings, seed0)
    save_arrays(job.output.predictions, preds)
    write_json(job.output.training, report)
