"""GPU probe (benchmarks/gpu.py): one Focusing training step (encode, sparse decode of the carved cells,
packed sparse rendering of the step's views) at the configured size, on a synthetic shape whose carved cells
are a spherical shell of the latent grid seen by zoomed views of a sphere of radius 0.6."""

from __future__ import annotations

import numpy as np
import torch

from repro.papers.focusing import carving, geometry
from repro.papers.focusing.model import VoxelVAE
from repro.papers.focusing.modes import draw_step
from repro.papers.focusing.train import step_loss, to_batch

BATCH_SIZE = 4


def build(section: dict, device):
    cfg, shapes = section["train"], section["shapes"]
    device = torch.device(device)
    n, f, image = shapes["base_cells"], section["fine_per_cell"], shapes["image"]
    cams = geometry.sphere_cameras(shapes["views"], shapes["camera_radius"])
    K = geometry.intrinsics(image, shapes["fov_deg"])
    centres = carving.cell_grid(carving.GRID_LO, carving.GRID_SIZE, n) + carving.GRID_SIZE / n / 2
    radius = np.linalg.norm(centres, axis=-1)
    shell = np.abs(radius - 0.6) < carving.GRID_SIZE / n
    fine = np.repeat(np.repeat(np.repeat(shell, f, 0), f, 1), f, 2)
    window = np.array([0.0, 0.0, float(image)])
    Ks = np.stack([geometry.zoom_intrinsics(K, window, image)] * len(cams))
    shape = {
        "voxels": fine.astype(np.uint8),
        "views/K": Ks,
        "views/depth": np.full((len(cams), image, image), 2.4, np.float32),
        "views/carved": np.stack([shell] * len(cams)),
        "views/frustum": np.ones((len(cams), n, n, n), bool),
    }
    m = section["model"]
    vae = VoxelVAE(m["width"], m["latent"], m["hidden"], f).to(device)
    loss = step_loss(cfg)

    def make_batch(size: int):
        step = draw_step(shape, cams, "focusing", np.random.default_rng(0), min(size, len(cams)))
        return to_batch(shape, step, device)

    return vae, make_batch, loss
