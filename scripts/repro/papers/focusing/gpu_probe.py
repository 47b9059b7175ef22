"""GPU probe (benchmarks/gpu.py): one Focusing training step (encode, sparse decode, render) at the configured
size, on a synthetic shape whose active cells are a shell of the latent grid."""

from __future__ import annotations

import numpy as np
import torch

from repro.papers.focusing import geometry
from repro.papers.focusing.model import VoxelVAE
from repro.papers.focusing.train import Shape, camera_rays, step_loss

BATCH_SIZE = 4


def build(section: dict, device):
    cfg, shapes = section["train"], section["shapes"]
    device = torch.device(device)
    n, f = shapes["zoom_cells"][-1], section["fine_per_cell"]
    cams = geometry.sphere_cameras(shapes["views"], shapes["camera_radius"])
    rays = camera_rays(cams, geometry.intrinsics(shapes["image"], shapes["fov_deg"]), shapes["image"], device)
    centre = (np.indices((n,) * 3).T - (n - 1) / 2).T
    radius = np.sqrt(np.sum(centre**2, axis=0))
    shell = np.abs(radius - n / 3) < 1.0
    fine = np.repeat(np.repeat(np.repeat(shell, f, 0), f, 1), f, 2)
    depth = np.full((len(cams), shapes["image"], shapes["image"]), 2.5, np.float32)
    arrays = {
        "probe/depth": depth,
        "probe/focusing/box": np.array([-1.0, -1.0, -1.0, 2.0]),
        "probe/focusing/active": shell,
        "probe/focusing/eval_active": shell,
        "probe/focusing/voxels": fine.astype(np.uint8),
    }
    shape = Shape(arrays, "probe", "focusing", rays, device)
    m = section["model"]
    vae = VoxelVAE(m["width"], m["latent"], m["hidden"], f).to(device)
    loss = step_loss(cfg)

    def make_batch(size: int):
        return shape, torch.arange(min(size, len(cams)))

    return vae, make_batch, loss
