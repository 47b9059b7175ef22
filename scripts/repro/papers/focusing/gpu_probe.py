"""GPU probe (benchmarks/gpu.py): one Focusing training step (encode, sparse decode of the carved cells,
packed sparse rendering of the step's views) at the configured size, on a synthetic shape whose carved cells
are a spherical shell of the latent grid seen by zoomed views of a sphere of radius 0.6."""

from __future__ import annotations

import numpy as np
import torch

from repro.papers.focusing import carving, geometry
from repro.papers.focusing.model import VoxelVAE
from repro.papers.focusing.modes import MODES, draw_step
from repro.papers.focusing.train import step_loss, to_batch

BATCH_SIZE = 4
STAGE = "train"  # one job per seed: every mode of it (workflow/rules/focusing.smk)

# The objects of Objaverse 1.0 (docs/papers/focusing.md, "Data to obtain": 800K objects), the most a
# ``shapes.source: folder`` run reads; a user's subset of n objects costs n / 800,000 of this.
OBJAVERSE_OBJECTS = 800_000


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


def training_shapes(section: dict) -> int:
    """Training meshes: the folder source holds its ``mesh_dir``'s meshes (:data:`OBJAVERSE_OBJECTS` at paper
    scale) less the last ``test_fraction`` (at least one, as repro.papers.focusing.data holds out); the
    embedded source trains on ``train_meshes``."""
    shapes = section["shapes"]
    if shapes["source"] != "folder":
        return len(shapes["train_meshes"])
    return OBJAVERSE_OBJECTS - max(1, int(round(shapes["test_fraction"] * OBJAVERSE_OBJECTS)))


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of one job of the train stage, a sample being one rendered view as in the probe's
    ``make_batch``: each of the four modes trains ``train.epochs`` epochs of one step per training shape
    (:func:`training_shapes`), and the benchmark then runs ``timing_repeats`` more forward + backward steps per
    shape and mode; each step renders min(``train.views_per_step``, ``shapes.views``) views (the batch). All
    modes count as the probe's focusing step (frustum decodes more cells, sectional and random as many as
    focusing). Left out: the held-out predictions (untrained and each mode, forward only) and the
    sparse-equals-dense check."""
    cfg = section["train"]
    views = min(cfg["views_per_step"], section["shapes"]["views"])
    steps = len(MODES) * training_shapes(section) * (cfg["epochs"] + section["timing_repeats"])
    return int(steps * views), int(views)
