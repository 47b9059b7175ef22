"""Stage: train the sparse-voxel VAE under each way of choosing a step's active cells; predict held-out shapes.

Modes (same VAE, same initialisation per seed, same number of steps, one rendered view per step unless
``views_per_step`` > 1; the data stage made the views and sets):

- ``focusing``: the zoomed view, active cells carved per view from its depth (the paper's method,
  reconstructed);
- ``frustum``: the same views, every cell of the view's frustum active (TripoSF-like frustum-aware training,
  no carving: the reference at full frustum budget);
- ``sectional``: TripoSF-like sectional training at a matched budget: a section of a zoomed view (its k x k
  tiling, each section zoomed again to the full image) with every cell of the section's frustum active;
- ``random``: the same views as ``focusing``, as many active cells as Focusing carves for that view, drawn
  uniformly from the view's frustum at every step (random subsampling at a matched budget).

The views of a step are drawn from ``epoch_rng`` identically for every mode (sectional: a section of the same
view), so modes differ only in their active cells. Each step encodes the shape's input occupancy, decodes
densities on the active cells and renders the step's views (samples in inactive cells are empty), supervised
by the ground-truth depth (L1 on the mask), the mask (binary cross-entropy), normals from the rendered depth
(finite differences, against the same operator on the ground-truth depth) and a KL term.

Outputs:
- runs.npz: ``<mode>/s<seed>/<shape>`` predicted surface points of each held-out shape (decoded on the cells
  the input occupies, dilated by one, the same rule for every mode; rendered from every zoomed view and the
  pixels of opacity > 1/2 back-projected), ``untrained/s<seed>/<shape>`` the same from the initialisation,
  ``check/removed_minus_zeroed`` the largest depth difference between the sparse and a zero-filled dense render;
- training.json: loss histories and, per mode and seed, the benchmark of training steps on a fixed list of
  (shape, view) steps, modes interleaved per step: seconds (fastest of ``timing_repeats``), bytes of tensors
  saved for backward (activation memory; with CUDA also the allocator's peak) and active cells, per step.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

from repro.learning.training import epoch_rng, fingerprint_of, train
from repro.papers.focusing import carving, geometry
from repro.papers.focusing.model import VoxelVAE, cells_to_grid, depth_normals, render, render_sparse
from repro.papers.focusing.modes import MODES, Shapes, draw_step
from repro.workflow.device import pick_device
from repro.workflow.fields_io import save_arrays
from repro.workflow.io import InputError, write_json

GRID_LO = torch.tensor(carving.GRID_LO, dtype=torch.float32)


def rays(cams: np.ndarray, Ks: np.ndarray, size: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Origins and unit directions (B, H, W, 3) of the pixel centres of each (camera, intrinsics) pair."""
    out = [geometry.camera_rays(c, k, size) for c, k in zip(cams, Ks)]
    as_t = lambda i: torch.tensor(np.stack([o[i] for o in out]), dtype=torch.float32, device=device)  # noqa: E731
    return as_t(0).view(len(out), size, size, 3), as_t(1).view(len(out), size, size, 3)


def to_batch(shape: dict, step, device) -> dict[str, torch.Tensor]:
    cam, K, depth, active = step
    origins, dirs = rays(cam, K, depth.shape[-1], device)
    depth = torch.from_numpy(np.ascontiguousarray(depth)).to(device)
    mask = torch.isfinite(depth)
    return {
        "voxels": torch.from_numpy(shape["voxels"]).to(device),
        "active": torch.from_numpy(np.ascontiguousarray(active)).to(device),
        "origins": origins,
        "dirs": dirs,
        "mask": mask,
        "depth": torch.where(mask, depth, torch.zeros_like(depth)),
    }


def step_loss(cfg: dict):
    """The training loss of one step's batch (see :func:`to_batch`); rendering goes through the active cells."""
    weights = cfg["loss"]

    def loss(vae: VoxelVAE, batch: dict) -> torch.Tensor:
        mu, logvar = vae.encode(batch["voxels"])
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        res = batch["voxels"].shape[0]
        cells = vae.decode_cells(z, batch["active"], carving.GRID_SIZE / res)
        o, d = batch["origins"], batch["dirs"]
        samples = int(np.ceil(cfg["samples_per_voxel"] * res))
        lo = GRID_LO.to(o.device)
        depth, opacity = render_sparse(
            cells, batch["active"], vae.fine, lo, carving.GRID_SIZE, o.reshape(-1, 3), d.reshape(-1, 3), samples
        )
        depth, opacity = depth.view(d.shape[:-1]), opacity.view(d.shape[:-1])
        mask, gt = batch["mask"], batch["depth"]
        l_depth = (torch.abs(depth - gt) * mask).sum() / mask.sum().clamp_min(1)
        l_mask = F.binary_cross_entropy(opacity.clamp(1e-5, 1 - 1e-5), mask.float())
        both = mask[:, :-1, :-1] & mask[:, 1:, :-1] & mask[:, :-1, 1:]
        n_pred = torch.stack([depth_normals(depth[v], d[v]) for v in range(len(d))])
        n_true = torch.stack([depth_normals(gt[v], d[v]) for v in range(len(d))])
        l_normal = ((1 - (n_pred * n_true).sum(-1)) * both).sum() / both.sum().clamp_min(1)
        kl = -0.5 * torch.mean(1 + logvar - mu**2 - logvar.exp())
        return l_depth + weights["mask"] * l_mask + weights["normal"] * l_normal + weights["kl"] * kl

    return loss


def batches_for(shapes: Shapes, names: list[str], mode: str, per_step: int, seed: int, device):
    def batches(epoch: int):
        rng = epoch_rng(seed, epoch)
        for i in rng.permutation(len(names)):
            shape = shapes[names[i]]
            yield to_batch(shape, draw_step(shape, shapes.cams, mode, rng, per_step), device)

    return batches


def saved_bytes_and_seconds(vae: VoxelVAE, loss, batch: dict, device) -> tuple[float, float, float | None]:
    """One training step (forward and backward): seconds, bytes of tensors saved for backward, CUDA peak."""
    total = [0]

    def pack(x: torch.Tensor) -> torch.Tensor:
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
    seconds = time.perf_counter() - start
    vae.zero_grad(set_to_none=True)
    peak = float(torch.cuda.max_memory_allocated()) if device.type == "cuda" else None
    return seconds, float(total[0]), peak


def benchmark(vaes: dict, shapes: Shapes, names: list[str], loss, per_step: int, repeats: int, device) -> dict:
    """Per mode, per benchmark step (each training shape once, views from a fixed generator, the same for every
    mode): fastest of ``repeats`` seconds, saved-for-backward bytes, CUDA peak and active cells. The modes are
    timed in turn within each repeat, so that a change in machine load affects all of them alike."""
    steps = {}
    for mode in vaes:
        rng = np.random.default_rng(0)
        steps[mode] = [
            to_batch(shapes[n], draw_step(shapes[n], shapes.cams, mode, rng, per_step), device) for n in names
        ]
    out = {
        m: {"seconds": [np.inf] * len(names), "saved_bytes": [], "cuda_peak_bytes": [], "active_cells": []}
        for m in vaes
    }
    for r in range(repeats):
        for i in range(len(names)):
            for mode, vae in vaes.items():
                torch.manual_seed(i)
                seconds, saved, peak = saved_bytes_and_seconds(vae, loss, steps[mode][i], device)
                out[mode]["seconds"][i] = min(out[mode]["seconds"][i], seconds)
                if r == 0:
                    out[mode]["saved_bytes"].append(saved)
                    out[mode]["cuda_peak_bytes"].append(peak)
                    out[mode]["active_cells"].append(float(steps[mode][i]["active"].sum()))
    return out


@torch.no_grad()
def predict(vae: VoxelVAE, shape: dict, cams: np.ndarray, image: int, samples_per_voxel: float, device) -> np.ndarray:
    """Surface points of a held-out shape: the densities decoded on its evaluation cells rendered from every
    zoomed view, and each pixel whose opacity exceeds 1/2 back-projected to its expected ray distance."""
    voxels = torch.from_numpy(shape["voxels"]).to(device)
    res = voxels.shape[0]
    sigma = vae.decode(
        vae.encode(voxels)[0], torch.from_numpy(shape["eval_active"]).to(device), carving.GRID_SIZE / res
    )
    o, d = rays(cams, shape["views/K"], image, device)
    o, d = o.reshape(-1, 3), d.reshape(-1, 3)
    depth, opacity = render(sigma, GRID_LO.to(device), carving.GRID_SIZE, o, d, int(np.ceil(samples_per_voxel * res)))
    hit = opacity > 0.5
    return (o[hit] + depth[hit, None] * d[hit]).cpu().numpy().astype(np.float32)


@torch.no_grad()
def sparse_equals_zeroed(shape: dict, cams: np.ndarray, fine: int, seed: int) -> float:
    """Largest depth difference (float64) between the sparse renderer on a view's carved cells and the dense
    renderer on a grid holding the same densities in those cells and zero elsewhere (they must agree)."""
    gen = torch.Generator().manual_seed(seed)
    active = torch.from_numpy(np.ascontiguousarray(shape["views/carved"][0]))
    cells = torch.rand(int(active.sum()), fine**3, generator=gen, dtype=torch.float64) * 10
    res = active.shape[0] * fine
    o, d = rays(cams[:1], shape["views/K"][:1], shape["views/depth"].shape[-1], "cpu")
    o, d = o.reshape(-1, 3).double(), d.reshape(-1, 3).double()
    lo = GRID_LO.double()
    sparse, _ = render_sparse(cells, active, fine, lo, carving.GRID_SIZE, o, d, 2 * res)
    dense, _ = render(cells_to_grid(cells, active, fine), lo, carving.GRID_SIZE, o, d, 2 * res)
    return float((sparse - dense).abs().max())


def new_vae(settings: dict, seed: int, device) -> VoxelVAE:
    torch.manual_seed(seed)
    m = settings["model"]
    return VoxelVAE(m["width"], m["latent"], m["hidden"], settings["fine_per_cell"]).to(device)


def main(job) -> None:
    settings, s = job.params.settings, int(job.wildcards.s)
    seed = int(job.params.seed) + s
    cfg = settings["train"]
    device = pick_device(job.params.device)
    shapes = Shapes(job.input.shapes)
    train_names, test_names = shapes.of("train"), shapes.of("test")
    if not train_names or not test_names:
        raise InputError(job.input.shapes, "needs training and held-out shapes")
    image = shapes[train_names[0]]["views/depth"].shape[-1]
    ckpt_dir = Path(job.output.training).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, np.ndarray] = {}
    report: dict = {"seed": s, "history": {}, "benchmark": {}}
    loss = step_loss(cfg)
    untrained = new_vae(settings, seed, device)
    for name in test_names:
        runs[f"untrained/s{s}/{name}"] = predict(
            untrained, shapes[name], shapes.cams, image, cfg["samples_per_voxel"], device
        )
    vaes = {}
    for mode in MODES:
        vae = new_vae(settings, seed, device)
        result = train(
            vae,
            loss,
            batches_for(shapes, train_names, mode, cfg["views_per_step"], seed, device),
            epochs=cfg["epochs"],
            optimizer=torch.optim.Adam(vae.parameters(), lr=cfg["lr"]),
            checkpoint=ckpt_dir / f"{mode}_s{s}.pt",
            checkpoint_every=1,
            fingerprint=fingerprint_of([settings, mode, seed], [__file__]),
            desc=f"focusing {mode} seed {s}",
            seed=seed,
            device=device,
            keep_last=True,
            precision=cfg.get("precision", "fp32"),
        )
        report["history"][mode] = result.history
        vaes[mode] = vae
        for name in test_names:
            runs[f"{mode}/s{s}/{name}"] = predict(
                vae, shapes[name], shapes.cams, image, cfg["samples_per_voxel"], device
            )
    report["benchmark"] = benchmark(
        vaes, shapes, train_names, loss, cfg["views_per_step"], settings["timing_repeats"], device
    )
    runs["check/removed_minus_zeroed"] = np.array(
        [sparse_equals_zeroed(shapes[n], shapes.cams, settings["fine_per_cell"], seed) for n in train_names],
        dtype=np.float64,
    )
    save_arrays(job.output.runs, runs)
    write_json(job.output.training, report)
    for mode in MODES:
        (ckpt_dir / f"{mode}_s{s}.pt").unlink(missing_ok=True)
