"""Stage: train Flower-lite, FNO-lite and U-Net-lite at matched parameter counts on each next-step task, then
score next steps and autoregressive rollouts on the test trajectories.

Every model predicts the increment of the state over one frame from the state and the task's static
coefficients (velocity for simulated advection, sound speed for waves, density and sound speed for The Well's
maze), on per-channel normalised data (statistics accumulated over the training trajectories one at a time).
Training pairs (frame t, frame t + 1) are read from the store on demand (held in memory below ``train.cache_mb``),
and test trajectories are scored one chunk at a time, so memory stays flat in the data size.

Outputs:
- scores.npz: ``<task>/<model>/s<seed>/next`` next-step VRMSE (sample, step, channel) from the true previous
  frame, ``.../rollout`` the autoregressive rollout's VRMSE from frame 0 over ``rollout_steps`` steps, the same for
  ``<task>/persistence`` (the trivial predictor: no change); ``<task>/example/truth`` and
  ``<task>/<model>/s<seed>/example`` (the first test trajectory's rollout, for the figures);
  ``advection/velocity_cells`` (the advecting velocity times dt over the grid spacing: cells per frame, on the
  first test trajectories' first frame) and ``advection/<model>/s<seed>/displacement`` (the first SelfWarp's
  per-head displacements there, for the interpretability check);
- training.json: parameter counts, histories, SelfWarp checks and forward times against grid size.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from repro.data.fields.store import open_fields, split_labels
from repro.learning.fields_training import fit_arrays
from repro.learning.operators import baseline, count_parameters
from repro.learning.training import fingerprint_of
from repro.metrics.fields import vrmse
from repro.papers.flower.model import Flower, SelfWarp, warp
from repro.workflow.device import pick_device
from repro.workflow.fields_io import save_arrays
from repro.workflow.io import write_json

TASKS = ("advection", "wave", "burgers")


class Task:
    """One store, lazily: the state and statics of a split's trajectories, one at a time."""

    def __init__(self, path: str):
        self.ds = open_fields(path, ("state",), load=False)
        self.split = split_labels(self.ds)
        self.has_static = "static" in self.ds
        self.periodic = bool(self.ds.attrs["periodic"])
        self.n_time = int(self.ds.state.shape[1])

    def rows(self, split: str) -> np.ndarray:
        return np.flatnonzero(self.split == split)

    def state(self, rows) -> np.ndarray:
        return np.asarray(self.ds.state.isel(sample=rows).values, dtype=np.float32)

    def static(self, rows) -> np.ndarray:
        if not self.has_static:
            shape = self.ds.state.shape
            return np.zeros((len(rows), 0, shape[-2], shape[-1]), np.float32)
        return np.asarray(self.ds["static"].isel(sample=rows).values, dtype=np.float32)

    def velocity_cells(self, rows) -> np.ndarray | None:
        """The advecting velocity in cells per frame (sample, 2, y, x) at frame 0, or None if the task has none."""
        where = str(self.ds.attrs.get("velocity", ""))
        if not where:
            return None
        kind, _, channels = where.partition(":")
        i, j = (int(c) for c in channels.split(","))
        source = self.static(rows) if kind == "static" else self.state(rows)[:, 0]
        dt, dx, dy = (float(self.ds.attrs[k]) for k in ("dt", "dx", "dy"))
        return np.stack([source[:, i] * dt / dx, source[:, j] * dt / dy], axis=1)


class Normaliser:
    """Per-channel statistics of the training states, statics and one-frame increments (float64 sums)."""

    def __init__(self, task: Task, rows: np.ndarray):
        sums = None
        for r in rows:
            state, static = task.state([r])[0], task.static([r])[0]
            delta = np.diff(state, axis=0)
            parts = [state.transpose(1, 0, 2, 3), delta.transpose(1, 0, 2, 3), static[:, None]]
            flat = [p.reshape(p.shape[0], int(np.prod(p.shape[1:]))) for p in parts]
            stats = [(f.sum(1), (f.astype(np.float64) ** 2).sum(1), f.shape[1]) for f in flat]
            sums = stats if sums is None else [(a + s, b + q, n + m) for (a, b, n), (s, q, m) in zip(sums, stats)]
        (s0, q0, n0), (s1, q1, n1), (s2, q2, n2) = sums
        mean, delta_mean = s0 / n0, s1 / n1
        self.mean = mean[None, :, None, None]
        self.std = np.sqrt(np.maximum(q0 / n0 - mean**2, 0))[None, :, None, None] + 1e-6
        self.delta = np.sqrt(np.maximum(q1 / n1 - delta_mean**2, 0))[None, :, None, None] + 1e-6
        if len(s2):
            s_mean = s2 / n2
            self.s_mean = s_mean[None, :, None, None]
            self.s_std = np.sqrt(np.maximum(q2 / n2 - s_mean**2, 0))[None, :, None, None] + 1e-6
        else:
            self.s_mean, self.s_std = 0.0, 1.0

    def inputs(self, frame: np.ndarray, static: np.ndarray) -> np.ndarray:
        return np.concatenate([(frame - self.mean) / self.std, (static - self.s_mean) / self.s_std], axis=1).astype(
            np.float32
        )


class Pairs:
    """Training pairs (frame t, t + 1) of a split as model inputs and normalised increments, read on demand."""

    def __init__(self, task: Task, rows: np.ndarray, norm: Normaliser, cache_mb: float, which: int):
        self.task, self.rows, self.norm, self.which = task, rows, norm, which
        steps = task.n_time - 1
        self.index = [(r, t) for r in rows for t in range(steps)]
        shape = task.ds.state.shape
        nbytes = 4 * len(rows) * int(np.prod(shape[1:]))
        self._cache, self._last = None, None
        if nbytes <= cache_mb * 2**20:
            self._cache = (task.state(rows), task.static(rows), {r: i for i, r in enumerate(rows)})

    def __len__(self) -> int:
        return len(self.index)

    def take(self, positions: np.ndarray) -> np.ndarray:
        key = np.asarray(positions).tobytes()
        if self._last is None or self._last[0] != key:
            self._last = (key, self._read(positions))
        now, nxt, stat = self._last[1]
        if self.which == 0:
            return self.norm.inputs(now, stat)
        return ((nxt - now) / self.norm.delta).astype(np.float32)

    def _read(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pairs = [self.index[p] for p in positions]
        if self._cache is not None:
            state, static, where = self._cache
            now = np.stack([state[where[r], t] for r, t in pairs])
            nxt = np.stack([state[where[r], t + 1] for r, t in pairs])
            stat = np.stack([static[where[r]] for r, _ in pairs])
        else:
            now, nxt, stat = [], [], []
            for r, t in pairs:
                two = np.asarray(self.task.ds.state.isel(sample=r, time=slice(t, t + 2)).values, np.float32)
                now.append(two[0])
                nxt.append(two[1])
                stat.append(self.task.static([r])[0])
            now, nxt, stat = np.stack(now), np.stack(nxt), np.stack(stat)
        return now, nxt, stat


class PairView:
    """One of the two arrays (inputs or targets) of :class:`Pairs`, for fit_arrays."""

    def __init__(self, pairs: Pairs, which: int):
        self.pairs, self.which = pairs, which

    def __len__(self) -> int:
        return len(self.pairs)

    def take(self, positions: np.ndarray) -> np.ndarray:
        self.pairs.which = self.which
        return self.pairs.take(positions)


def build(name: str, cin: int, cout: int, cfg: dict, periodic: bool = True) -> torch.nn.Module:
    flower = Flower(
        cin, cout, width=cfg["width"], heads=cfg["heads"], levels=cfg["levels"], blocks=cfg["blocks"], periodic=periodic
    )
    if name == "flower":
        return flower
    extra = {"modes": cfg["fno_modes"]} if name == "fno" else ({"periodic": periodic} if name == "unet" else {})
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
        lr_schedule=settings["train"].get("schedule", "constant"),
    )


@torch.no_grad()
def step(model, frame: np.ndarray, static: np.ndarray, norm: Normaliser) -> np.ndarray:
    x = torch.from_numpy(norm.inputs(frame, static))
    return frame + model(x).numpy() * norm.delta


def predict(
    model, state: np.ndarray, static: np.ndarray, norm: Normaliser, steps: int
) -> tuple[np.ndarray, np.ndarray]:
    """Next-step predictions from every true frame, and the autoregressive rollout of ``steps`` steps from frame 0."""
    nxt = np.stack([step(model, state[:, t], static, norm) for t in range(state.shape[1] - 1)], axis=1)
    roll, frame = [], state[:, 0]
    for _ in range(steps):
        frame = step(model, frame, static, norm)
        roll.append(frame)
    return nxt.astype(np.float32), np.stack(roll, axis=1).astype(np.float32)


@torch.no_grad()
def first_displacements(model: Flower, state: np.ndarray, static: np.ndarray, norm: Normaliser) -> np.ndarray:
    """The first SelfWarp's displacements (sample, head, 2, y, x) in cells, on the test inputs at frame 0."""
    z = model.lift(torch.from_numpy(norm.inputs(state[:, 0], static)))
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
    """Seconds per SelfWarp forward (batch 1) against the number of grid points, every repeat kept."""
    cfg = settings["scaling"]
    torch.manual_seed(seed)
    layer = SelfWarp(settings["model"]["width"], settings["model"]["heads"])
    with torch.no_grad():
        layer.displacement[-1].weight.normal_(0, 0.5)
    seconds = []
    for n in cfg["grids"]:
        u = torch.randn(1, settings["model"]["width"], n, n)
        layer(u)
        runs = []
        for _ in range(cfg["repeats"]):
            start = time.perf_counter()
            layer(u)
            runs.append(time.perf_counter() - start)
        seconds.append(runs)
    return {"points": [n * n for n in cfg["grids"]], "seconds": seconds}


def score_task(task: Task, rows: np.ndarray, norm: Normaliser, models: dict, steps: int, chunk: int) -> dict:
    """VRMSE arrays of persistence and every model, one chunk of test trajectories at a time."""
    out: dict[str, list] = {}
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        state, static = task.state(part), task.static(part)
        truth, axes = state[:, 1:], 2  # (y, x); a 1-D field has y of size 1
        roll_truth = state[:, 1 : steps + 1]
        out.setdefault("persistence/next", []).append(vrmse(state[:, :-1], truth, axes))
        persist = np.repeat(state[:, :1], roll_truth.shape[1], axis=1)
        out.setdefault("persistence/rollout", []).append(vrmse(persist, roll_truth, axes))
        for key, model in models.items():
            nxt, roll = predict(model, state, static, norm, roll_truth.shape[1])
            out.setdefault(f"{key}/next", []).append(vrmse(nxt, truth, axes))
            out.setdefault(f"{key}/rollout", []).append(vrmse(roll, roll_truth, axes))
            if start == 0:
                out[f"{key}/example"] = [roll[:1]]
        if start == 0:
            out["example/truth"] = [roll_truth[:1]]
    return {k: np.concatenate(v).astype(np.float32) for k, v in out.items()}


def main(job) -> None:
    settings, seed0 = job.params.settings, int(job.params.seed)
    device = pick_device(job.params.device)
    ckpt_dir = Path(job.output.training).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    scores: dict[str, np.ndarray] = {}
    report: dict = {"parameters": {}, "history": {}, "datasets": {}}
    cache, chunk = settings["train"]["cache_mb"], settings["chunk"]
    for name in TASKS:
        task = Task(getattr(job.input, name))
        report["datasets"][name] = str(task.ds.attrs.get("dataset", name))
        train_rows, test_rows = task.rows("train"), task.rows("test")
        norm = Normaliser(task, train_rows)
        pairs = Pairs(task, train_rows, norm, cache, 0)
        x, y = PairView(pairs, 0), PairView(pairs, 1)
        cin, cout = x.take(np.array([0])).shape[1], y.take(np.array([0])).shape[1]
        seeds = settings["seeds"] if name in settings["seeded_tasks"] else settings["seeds"][:1]
        models = {}
        for model_name in settings["models"]:
            for s in seeds:
                seed = seed0 + s
                torch.manual_seed(seed)
                model = build(model_name, cin, cout, settings["model"], task.periodic)
                ckpt = ckpt_dir / f"{name}_{model_name}_{s}.pt"
                result = fit(
                    model, x, y, settings, seed, ckpt, device=device, batch=settings["tasks"][name].get("batch")
                )
                ckpt.unlink(missing_ok=True)
                key = f"{model_name}/s{s}"
                report["parameters"][f"{name}/{model_name}"] = count_parameters(model)
                report["history"][f"{name}/{key}"] = result.history
                models[key] = model
        steps = min(settings["rollout_steps"], task.n_time - 1)
        scores |= {f"{name}/{k}": v for k, v in score_task(task, test_rows, norm, models, steps, chunk).items()}
        first = test_rows[: min(chunk, len(test_rows))]
        velocity = task.velocity_cells(first)
        if name == "advection" and velocity is not None:
            scores["advection/velocity_cells"] = velocity.astype(np.float32)
            state, static = task.state(first), task.static(first)
            for key, model in models.items():
                if isinstance(model, Flower):
                    scores[f"advection/{key}/displacement"] = first_displacements(model, state, static, norm)
    report["checks"] = warp_checks(seed0)
    report["forward_times"] = forward_times(settings, seed0)
    save_arrays(job.output.scores, scores)
    write_json(job.output.training, report)
