"""Stage: train the voxel VAE per mode (dense baseline, carved, carved + zoomed) and seed from rendered views.

Each step takes one training shape (order from ``epoch_rng``) and a subset of its views; the VAE encodes the
shape's input occupancy, decodes densities on the mode's active cells and renders depth and opacity, supervised
by the ground-truth depth (L1 on the mask), mask (binary cross-entropy), normals from the rendered depth
(finite differences, against the same operator on the ground-truth depth) and a KL term.

Outputs:
- runs.npz: ``<mode>/s<seed>/<shape>`` predicted surface points of each held-out shape (decoded on the cells
  the input occupies, dilated by one: the same rule for every mode; rendered from every view and the pixels
  of opacity > 1/2 back-projected), ``check/<mode>/removed_minus_zeroed`` the largest
  depth difference between the sparse renderer and the dense one on a zero-filled grid;
- training.json: loss histories, and per mode and seed the benchmark of training steps: seconds per step,
  bytes of tensors saved for backward (activation memory; with CUDA also the allocator's peak), active cells.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from repro.learning.training import epoch_rng, fingerprint_of, train
from repro.papers.focusing.carving import MODES
from repro.papers.focusing.model import VoxelVAE, depth_normals, render
from repro.workflow.device import pick_device
from repro.workflow.fields_io import load_arrays, save_arrays
from repro.workflow.io import InputError, write_json


class Shape:
    """One shape's tensors for one mode: views, rays, box, active cells and input voxels."""

    def __init__(self, arrays: dict, name: str, mode: str, rays: tuple[torch.Tensor, torch.Tensor], device):
        box = arrays[f"{name}/{mode}/box"]
        self.name = name
        self.lo, self.size = torch.tensor(box[:3], dtype=torch.float32, device=device), float(box[3])
        self.active = torch.from_numpy(arrays[f"{name}/{mode}/active"]).to(device)
        self.eval_active = torch.from_numpy(arrays[f"{name}/{mode}/eval_active"]).to(device)
        self.voxels = torch.from_numpy(arrays[f"{name}/{mode}/voxels"]).to(device)
        depth = torch.from_numpy(arrays[f"{name}/depth"]).to(device)
        self.mask = torch.isfinite(depth)
        self.depth = torch.where(self.mask, depth, torch.zeros_like(depth))
        self.origins, self.dirs = rays


def camera_rays(cams: np.ndarray, K: np.ndarray, size: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Origins and unit directions (V, H, W, 3) of every pixel centre, as the data stage cast them."""
    ys, xs = np.meshgrid(np.arange(size) + 0.5, np.arange(size) + 0.5, indexing="ij")
    pix = np.stack([(xs - K[0, 2]) / K[0, 0], (ys - K[1, 2]) / K[1, 1], np.ones_like(xs)], axis=-1)
    dirs = np.einsum("hwk,vjk->vhwj", pix, cams[:, :3, :3])
    dirs /= np.linalg.norm(dirs, axis=-1, keepdims=True)
    origins = np.broadcast_to(cams[:, None, None, :3, 3], dirs.shape)
    as_t = lambda a: torch.tensor(np.ascontiguousarray(a), dtype=torch.float32, device=device)  # noqa: E731
    return as_t(origins), as_t(dirs)


def step_loss(cfg: dict):
    """The training loss of one (shape, views) batch; ``sparse`` renders through the active cells only."""
    weights = cfg["loss"]

    def loss(vae: VoxelVAE, batch) -> torch.Tensor:
        shape, views = batch
        mu, logvar = vae.encode(shape.voxels)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        res = shape.voxels.shape[0]
        sigma = vae.decode(z, shape.active, shape.size / res)
        o, d = shape.origins[views], shape.dirs[views]
        samples = int(np.ceil(cfg["samples_per_voxel"] * res))
        depth, opacity = render(sigma, shape.lo, shape.size, o.reshape(-1, 3), d.reshape(-1, 3), samples, shape.active)
        depth, opacity = depth.view(d.shape[:-1]), opacity.view(d.shape[:-1])
        mask, gt = shape.mask[views], shape.depth[views]
        l_depth = (torch.abs(depth - gt) * mask).sum() / mask.sum().clamp_min(1)
        l_mask = F.binary_cross_entropy(opacity.clamp(1e-5, 1 - 1e-5), mask.float())
        both = mask[:, :-1, :-1] & mask[:, 1:, :-1] & mask[:, :-1, 1:]
        n_pred = torch.stack([depth_normals(depth[v], d[v]) for v in range(len(views))])
        n_true = torch.stack([depth_normals(gt[v], d[v]) for v in range(len(views))])
        l_normal = ((1 - (n_pred * n_true).sum(-1)) * both).sum() / both.sum().clamp_min(1)
        kl = -0.5 * torch.mean(1 + logvar - mu**2 - logvar.exp())
        return l_depth + weights["mask"] * l_mask + weights["normal"] * l_normal + weights["kl"] * kl

    return loss


def batches_for(shapes: list[Shape], views: int, per_step: int, seed: int):
    def batches(epoch: int):
        rng = epoch_rng(seed, epoch)
        for i in rng.permutation(len(shapes)):
            yield shapes[i], torch.from_numpy(np.sort(rng.choice(views, size=per_step, replace=False)))

    return batches


def benchmark(vae: VoxelVAE, shapes: list[Shape], loss, views: int, per_step: int, device, repeats: int = 2) -> dict:
    """Seconds per training step (forward and backward; per shape the fastest of ``repeats``, so a busy
    machine's hiccups count less) and bytes of tensors saved for backward, over one pass of the shapes."""
    seconds, saved, peaks = [], [], []
    rng = np.random.default_rng(0)
    for shape in shapes:
        batch = (shape, torch.from_numpy(np.sort(rng.choice(views, size=per_step, replace=False))))
        best = float("inf")
        for _ in range(repeats):
            total = [0]

            def pack(x: torch.Tensor, total=total) -> torch.Tensor:
                total[0] += x.numel() * x.element_size()
                return x

            if device.type == "cuda":
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            start = time.perf_counter()
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
                value = loss(vae, batch)
            value.backward()
            if device.type == "cuda":
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - start)
            vae.zero_grad(set_to_none=True)
        seconds.append(best)
        saved.append(total[0])
        if device.type == "cuda":
            peaks.append(torch.cuda.max_memory_allocated())
    return {
        "seconds_per_step": float(np.mean(seconds)),
        "saved_bytes_per_step": float(np.mean(saved)),
        "cuda_peak_bytes": float(np.mean(peaks)) if peaks else None,
        "active_cells": float(np.mean([float(s.active.sum()) for s in shapes])),
        "fine_voxels_decoded": float(np.mean([float(s.active.sum()) * 64 for s in shapes])),
    }


@torch.no_grad()
def predict(vae: VoxelVAE, shape: Shape, samples_per_voxel: float) -> np.ndarray:
    """Surface points of a held-out shape: the decoded densities rendered from every view, and each pixel whose
    opacity exceeds 1/2 back-projected to its expected ray distance."""
    res = shape.voxels.shape[0]
    sigma = vae.decode(vae.encode(shape.voxels)[0], shape.eval_active, shape.size / res)
    o, d = shape.origins.reshape(-1, 3), shape.dirs.reshape(-1, 3)
    depth, opacity = render(sigma, shape.lo, shape.size, o, d, int(np.ceil(samples_per_voxel * res)))
    hit = opacity > 0.5
    return (o[hit] + depth[hit, None] * d[hit]).cpu().numpy().astype(np.float32)


@torch.no_grad()
def sparse_equals_zeroed(shape: Shape, seed: int) -> float:
    """Largest depth difference between rendering through the active cells only and rendering a dense grid
    whose inactive cells are zero (they must agree: inactive voxels are empty either way)."""
    gen = torch.Generator().manual_seed(seed)
    res = shape.voxels.shape[0]
    f = res // shape.active.shape[0]
    sigma = torch.rand(res, res, res, generator=gen) * 10
    keep = shape.active.cpu().repeat_interleave(f, 0).repeat_interleave(f, 1).repeat_interleave(f, 2)
    sigma = (sigma * keep).to(shape.lo.device)
    o, d = shape.origins.reshape(-1, 3), shape.dirs.reshape(-1, 3)
    sparse, _ = render(sigma, shape.lo, shape.size, o, d, 2 * res, shape.active)
    dense, _ = render(sigma, shape.lo, shape.size, o, d, 2 * res, None)
    return float((sparse - dense).abs().max())


def main(job) -> None:
    settings, seed0 = job.params.settings, int(job.params.seed)
    cfg = settings["train"]
    device = pick_device(job.params.device)
    arrays = load_arrays(job.input.shapes)
    for key in ("names", "split", "cams", "K"):
        if key not in arrays:
            raise InputError(job.input.shapes, f"missing {key!r}")
    names, split = [str(n) for n in arrays["names"]], [str(s) for s in arrays["split"]]
    cams = arrays["cams"]
    origins, dirs = camera_rays(cams, arrays["K"], arrays[f"{names[0]}/depth"].shape[-1], device)
    ckpt_dir = Path(job.output.training).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, np.ndarray] = {}
    report: dict = {"history": {}, "benchmark": {}}
    loss = step_loss(cfg)
    for mode in MODES:
        shapes = {n: Shape(arrays, n, mode, (origins, dirs), device) for n in names}
        train_shapes = [shapes[n] for n, s in zip(names, split) if s == "train"]
        test_shapes = [shapes[n] for n, s in zip(names, split) if s == "test"]
        for s in settings["seeds"]:
            seed = seed0 + s
            torch.manual_seed(seed)
            m = settings["model"]
            vae = VoxelVAE(m["width"], m["latent"], m["hidden"], settings["fine_per_cell"]).to(device)
            result = train(
                vae,
                loss,
                batches_for(train_shapes, len(cams), cfg["views_per_step"], seed),
                epochs=cfg["epochs"],
                optimizer=torch.optim.Adam(vae.parameters(), lr=cfg["lr"]),
                checkpoint=ckpt_dir / f"{mode}_s{s}.pt",
                checkpoint_every=1,
                fingerprint=fingerprint_of([settings, mode, seed], [__file__]),
                desc=f"focusing {mode} seed {s}",
                seed=seed,
                device=device,
            )
            report["history"][f"{mode}/s{s}"] = result.history
            report["benchmark"][f"{mode}/s{s}"] = benchmark(
                vae, train_shapes, loss, len(cams), cfg["views_per_step"], device
            )
            for shape in test_shapes:
                runs[f"{mode}/s{s}/{shape.name}"] = predict(vae, shape, cfg["samples_per_voxel"])
        if mode != "dense":
            runs[f"check/{mode}/removed_minus_zeroed"] = np.array(
                [sparse_equals_zeroed(shapes[n], seed0) for n in names], dtype=np.float64
            )
    save_arrays(job.output.runs, runs)
    write_json(job.output.training, report)
    for ckpt in ckpt_dir.glob("*.pt"):
        ckpt.unlink()
