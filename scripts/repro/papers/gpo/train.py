"""Stage: train GPO-lite and the baselines (FNO, Galerkin transformer) at matched size on Darcy and
Navier-Stokes, then predict every test set the claims need.

Outputs:
- predictions.npz: ``<task>/<model>/<res>`` predicted test fields (lo and hi resolution),
  ``<task>/<model>/irregular`` predictions on a random subset of the lo grid points (point models) with
  ``<task>/irregular_index``; the truths ``<task>/truth/<res>``;
- training.json: parameter counts, histories, the exact checks on the trained GPO (decoder consistency
  across resolutions, invariance of the measurement to point order), forward times against N, and the
  learned particles (centres and scales) for the figures.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from repro.data.fields.store import open_fields, split_of
from repro.learning.fields_training import fit_arrays
from repro.learning.operators import GalerkinTransformer, baseline, count_parameters, grid_coordinates
from repro.learning.training import fingerprint_of
from repro.papers.gpo.model import GPO
from repro.workflow.device import pick_device
from repro.workflow.fields_io import save_arrays
from repro.workflow.io import write_json

TASKS = {"darcy": ("permeability", "pressure"), "ns": ("vorticity", "vorticity")}
POINT_MODELS = ("gpo", "galerkin")
RESIDUAL = ("ns",)


def task_arrays(lo: str, hi: str, task: str) -> dict[str, np.ndarray]:
    """Inputs/targets (sample, 1, y, x): Darcy permeability -> pressure; NS frame k -> the change to frame k + 1
    (``*_base`` holds frame k, which predictions add back: every model forecasts the increment, so each starts
    from persistence, the trivial forecast it must beat)."""
    src, dst = TASKS[task]
    out = {}
    for res, path in (("lo", lo), ("hi", hi)):
        ds = open_fields(path, (src, dst))
        for split in ("train", "test"):
            part = split_of(ds, split)
            if part.sizes["sample"] == 0:
                continue
            a, u = part[src].values, part[dst].values
            if task == "ns":
                a, u = a[:, :-1], u[:, 1:]
            x = a.reshape(-1, 1, *a.shape[-2:]).astype(np.float32)
            y = u.reshape(-1, 1, *u.shape[-2:]).astype(np.float32)
            out[f"{split}_{res}_x"] = x
            out[f"{split}_{res}_y"] = y - x if task in RESIDUAL else y
            out[f"{split}_{res}_base"] = x if task in RESIDUAL else np.zeros_like(y)
    return out


def build(name: str, settings: dict, periodic: bool) -> torch.nn.Module:
    cfg = settings["model"]
    gpo = GPO(
        1,
        1,
        width=cfg["width"],
        particles=cfg["particles"],
        layers=cfg["layers"],
        heads=cfg["heads"],
        sigma=(cfg["sigma_min"], cfg["sigma_max"]),
        periodic=periodic,
    )
    if name == "gpo":
        return gpo
    extra = {"modes": cfg["fno_modes"], "layers": cfg["layers"]} if name == "fno" else {"layers": cfg["layers"]}
    return baseline(name, 1, 1, count_parameters(gpo), **extra)


def mse_loss(model, batch, align_weight: float) -> torch.Tensor:
    x, y = batch
    loss = torch.mean((model(x) - y) ** 2)
    if isinstance(model, GPO) and align_weight > 0:
        coords = grid_coordinates(1, *x.shape[-2:], x.device).flatten(2).transpose(1, 2)
        loss = loss + align_weight * model.alignment_loss(x.flatten(2).transpose(1, 2), coords)
    return loss


def fit(
    model,
    x: np.ndarray,
    y: np.ndarray,
    settings: dict,
    seed: int,
    checkpoint: Path | None,
    loss_fn=mse_loss,
    device: torch.device | None = None,
):
    """Train on normalised tensors with repro.learning.training.train (seeded per epoch, resumable); the model
    ends on the CPU, where predictions and checks run."""
    return fit_arrays(
        model,
        (x, y),
        lambda m, b: loss_fn(m, b, settings["model"]["align_weight"]),
        train_cfg=settings["train"],
        seed=seed,
        checkpoint=checkpoint,
        fingerprint=fingerprint_of(settings, [__file__]),
        desc=f"gpo {type(model).__name__}",
        device=device,
    )


@torch.no_grad()
def predict(model, x: np.ndarray, chunk: int = 32) -> np.ndarray:
    return np.concatenate([model(torch.from_numpy(x[i : i + chunk])).numpy() for i in range(0, len(x), chunk)])


@torch.no_grad()
def predict_points(model, x: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Predictions at a subset of grid points (per-sample index arrays), from the inputs at those points only."""
    coords_all = grid_coordinates(1, *x.shape[-2:]).flatten(2).transpose(1, 2)[0]
    values = torch.from_numpy(x).flatten(2).transpose(1, 2)
    out = []
    for i in range(len(x)):
        idx = torch.from_numpy(index[i])
        out.append(model.forward_points(values[i : i + 1, idx], coords_all[idx][None])[0, :, 0].numpy())
    return np.stack(out)


@torch.no_grad()
def exact_checks(model: GPO, x: np.ndarray, seed: int) -> dict[str, float]:
    """Decoder on a 2n grid at the shared points vs on the n grid; measurement under a point permutation."""
    layer = model.layers[0]
    n = x.shape[-1]
    values = torch.from_numpy(x[:2]).flatten(2).transpose(1, 2)
    coords = grid_coordinates(1, n, n).flatten(2).transpose(1, 2)
    z = layer.process(layer.measure(model.lift(torch.cat([values, coords.expand(2, -1, -1)], -1)), coords))
    coarse = layer.reconstruct(z, coords).reshape(2, n, n, -1)
    fine_coords = grid_coordinates(1, 2 * n, 2 * n).flatten(2).transpose(1, 2)
    fine = layer.reconstruct(z, fine_coords).reshape(2, 2 * n, 2 * n, -1)[:, ::2, ::2]
    perm = torch.from_numpy(np.random.default_rng(seed).permutation(n * n))
    features = model.lift(torch.cat([values, coords.expand(2, -1, -1)], -1))
    z0 = layer.measure(features, coords)
    z1 = layer.measure(features[:, perm], coords[:, perm])
    return {
        "decoder_max_abs_diff": float((fine - coarse).abs().max()),
        "measurement_permutation_max_abs_diff": float((z1 - z0).abs().max() / z0.abs().max()),
    }


@torch.no_grad()
def forward_times(settings: dict, seed: int) -> dict:
    """Seconds per forward pass (batch 1, every repeat kept) against the number of points."""
    cfg, scaling = settings["model"], settings["scaling"]
    torch.manual_seed(seed)
    models = {
        "gpo": GPO(
            1, 1, cfg["width"], cfg["particles"], cfg["layers"], cfg["heads"], (cfg["sigma_min"], cfg["sigma_max"])
        ),
        "galerkin": GalerkinTransformer(1, 1, cfg["width"], cfg["layers"], cfg["heads"]),
        "softmax": GalerkinTransformer(1, 1, cfg["width"], cfg["layers"], cfg["heads"], attention="softmax"),
    }
    out = {}
    for name, model in models.items():
        model.eval()
        points = scaling["softmax_points"] if name == "softmax" else scaling["points"]
        times = []
        for n in points:
            gen = torch.Generator().manual_seed(n)
            values, coords = torch.randn(1, n, 1, generator=gen), torch.rand(1, n, 2, generator=gen)
            model.forward_points(values, coords)
            runs = []
            for _ in range(scaling["repeats"]):
                start = time.perf_counter()
                model.forward_points(values, coords)
                runs.append(time.perf_counter() - start)
            times.append(runs)
        out[name] = {"points": list(points), "seconds": times}
    return out


def normalise(arrays: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    stats = {k: (float(arrays[f"train_lo_{k}"].mean()), float(arrays[f"train_lo_{k}"].std())) for k in ("x", "y")}
    normed = {k: (v - stats[k[-1]][0]) / stats[k[-1]][1] if k[-1] in stats else v for k, v in arrays.items()}
    return normed, {"x_mean": stats["x"][0], "x_std": stats["x"][1], "y_mean": stats["y"][0], "y_std": stats["y"][1]}


def main(job) -> None:
    settings, seed = job.params.settings, int(job.params.seed)
    device = pick_device(job.params.device)
    torch.manual_seed(seed)
    ckpt_dir = Path(job.output.training).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    preds: dict[str, np.ndarray] = {}
    report: dict = {"parameters": {}, "history": {}, "particles": {}, "checks": {}}
    for task, (lo, hi) in {
        "darcy": (job.input.darcy_lo, job.input.darcy_hi),
        "ns": (job.input.ns_lo, job.input.ns_hi),
    }.items():
        arrays, stats = normalise(task_arrays(lo, hi, task))
        periodic = task == "ns"
        n_points = arrays["test_lo_x"].shape[-1] ** 2
        keep = int(round(settings["irregular_fraction"] * n_points))
        rng = np.random.default_rng([seed, 7])
        index = np.stack([np.sort(rng.choice(n_points, keep, replace=False)) for _ in arrays["test_lo_x"]])
        preds[f"{task}/irregular_index"] = index
        base = {res: arrays[f"test_{res}_base"] for res in ("lo", "hi")}
        for res in ("lo", "hi"):
            preds[f"{task}/truth/{res}"] = arrays[f"test_{res}_y"] * stats["y_std"] + stats["y_mean"] + base[res]
        # the trivial predictor of the learning checks: persistence for NS, the training mean field for Darcy
        train_mean = (arrays["train_lo_y"] * stats["y_std"] + stats["y_mean"] + arrays["train_lo_base"]).mean(0)
        preds[f"{task}/trivial/lo"] = (
            base["lo"] if task in RESIDUAL else np.broadcast_to(train_mean, base["lo"].shape).copy()
        )
        for name in ("gpo", *settings["baselines"]):
            model = build(name, settings, periodic)
            ckpt = ckpt_dir / f"{task}_{name}.pt"
            result = fit(model, arrays["train_lo_x"], arrays["train_lo_y"], settings, seed, ckpt, device=device)
            ckpt.unlink(missing_ok=True)
            report["parameters"][f"{task}/{name}"] = count_parameters(model)
            report["history"][f"{task}/{name}"] = result.history
            for res in ("lo", "hi"):
                preds[f"{task}/{name}/{res}"] = (
                    predict(model, arrays[f"test_{res}_x"]) * stats["y_std"] + stats["y_mean"] + base[res]
                )
            if name in POINT_MODELS:
                sub = predict_points(model, arrays["test_lo_x"], index)
                sub_base = np.take_along_axis(base["lo"].reshape(len(index), -1), index, axis=1)
                preds[f"{task}/{name}/irregular"] = sub * stats["y_std"] + stats["y_mean"] + sub_base
            if name == "gpo":
                report["checks"][task] = exact_checks(model, arrays["test_lo_x"], seed)
                report["particles"][task] = [
                    {"centres": layer.trial.centres.detach().numpy(), "scales": layer.trial.scales.detach().numpy()}
                    for layer in model.layers
                ]
    report["forward_times"] = forward_times(settings, seed)
    save_arrays(job.output.predictions, preds)
    write_json(job.output.training, report)
