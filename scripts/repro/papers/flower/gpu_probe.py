"""Flower's training step at paper scale for benchmarks/gpu.py: The Well's shear flow (4 fields, 128 x 256).

Inputs are the state plus its static fields as the training pairs build them (here none: shear flow has no
static field); the loss is the increment regression of training.
"""

from __future__ import annotations

import functools
import math

BATCH_SIZE = 16
STAGE = "train"  # one job (workflow/rules/flower.smk): every model on every task, seeds on the seeded tasks

# The paper-scale files hold (no config key gives these; a user's downloads): per task, the trajectories one
# listed training file holds, the frames of a trajectory, the grid of a frame (y, x), the channels in and out
# (the state, plus the statics on the input side) and whether the grid is periodic.
# - shear_flow (The Well's README: 1120 simulations = 28 (Reynolds, Schmidt) files x 40 initial conditions,
#   200 time steps of 128 x 256; the train/valid/test split of each file 80/10/10, so 32 per training file;
#   tracer, pressure and velocity's two components; periodic);
# - acoustic_scattering_maze (The Well's README: 2000 trajectories of 256 x 256 in 20 chunk files of 100,
#   16 of them train; 202 frames a trajectory: the README counts 201 steps after the first, readers of the
#   files index frame 201; pressure and velocity, density and sound speed as statics; open boundaries);
# - PDEBench 1-D Burgers (1D_Burgers_Sols_Nu*.hdf5: 10000 samples of 201 steps x 1024 points, a (1, 1024)
#   grid as the data stage stores it; the training samples are ``n_train``).
PAPER_DATA = {
    "advection": {
        "source": "the_well",
        "per_file": 32,
        "frames": 200,
        "grid": (128, 256),
        "channels": (4, 4),
        "periodic": True,
    },
    "wave": {
        "source": "the_well",
        "per_file": 100,
        "frames": 202,
        "grid": (256, 256),
        "channels": (5, 3),
        "periodic": False,
    },
    "burgers": {
        "source": "pdebench",
        "per_file": None,
        "frames": 201,
        "grid": (1, 1024),
        "channels": (1, 1),
        "periodic": True,
    },
}
# the probe's step: Flower on shear flow
GRID, CHANNELS = PAPER_DATA["advection"]["grid"], PAPER_DATA["advection"]["channels"][0]
# the embedded sources' sizes off paper scale: neuraloperator 0.3.0's burgers_lowres.pt (docs/papers/flower.md)
NEURALOPERATOR_BURGERS = {"trajectories": 1200, "frames": 17, "points": 16}


def build(
    section: dict,
    device,
    grid: tuple[int, int] = GRID,
    model_name: str = "flower",
    channels: tuple[int, int] = (CHANNELS, CHANNELS),
    periodic: bool = True,
):
    """(model, batch(size), loss) of one step of ``model_name`` (Flower or a baseline at Flower's parameter
    count, as train.py builds them) at the section's width, heads, levels and blocks on ``grid``."""
    import torch

    from repro.papers.flower.train import build as build_model
    from repro.papers.flower.train import mse_loss

    cin, cout = channels
    model = build_model(model_name, cin, cout, section["model"], periodic).to(device)

    def batch(size: int):
        return torch.randn((size, cin, *grid), device=device), torch.randn((size, cout, *grid), device=device)

    return model, batch, mse_loss


def arms(section: dict) -> dict[str, tuple]:
    """``task/model`` -> (build, batch) of every (task, model) the train job trains, on the task's paper-scale
    grid and channels (:data:`PAPER_DATA`); the cost benchmark counts each arm's FLOPs per pair against the
    probe's (Flower on shear_flow) to weigh its pairs in :func:`work`."""
    out = {}
    for task, data in PAPER_DATA.items():
        batch = section["tasks"][task].get("batch", section["train"]["batch"])
        for name in section["models"]:
            geometry = {"grid": data["grid"], "model_name": name, "channels": data["channels"]}
            out[f"{task}/{name}"] = (
                functools.partial(build, **geometry, periodic=data["periodic"]),
                int(batch),
            )
    return out


def task_pairs(name: str, cfg: dict) -> tuple[int, float]:
    """(training pairs, grid points of a frame) of one task at these settings: trajectories x (frames - 1),
    frames after ``time_stride``. The Well: ``n_train`` trajectories at most, as many as the listed
    ``train_files`` hold (:data:`PAPER_DATA`); PDEBench: ``n_train``; the simulators: ``n_train`` x
    (``frames`` - 1) on ``resolution``^2; neuraloperator: ``n_train`` of :data:`NEURALOPERATOR_BURGERS`."""
    source = cfg.get("source", "simulator" if name != "burgers" else "neuraloperator")
    stride = cfg.get("time_stride", 1)
    if source == "simulator":
        return cfg["n_train"] * (cfg["frames"] - 1), cfg["resolution"] ** 2
    if source == "neuraloperator":
        data = NEURALOPERATOR_BURGERS
        return min(cfg["n_train"], data["trajectories"]) * (data["frames"] - 1), data["points"]
    data = PAPER_DATA[name]
    if source != data["source"]:
        raise ValueError(f"flower task {name}: no work model for source {source!r}")
    if source == "the_well":
        trajectories = min(cfg["n_train"], data["per_file"] * len(cfg["train_files"]))
    else:
        trajectories = cfg["n_train"]
    return trajectories * (math.ceil(data["frames"] / stride) - 1), math.prod(data["grid"])


def work(section: dict, shares: dict[str, float]) -> tuple[int, int]:
    """(samples, batch) of the one train job, in training pairs of the probe's step (Flower on shear_flow):
    ``train.epochs`` x the sum over ``tasks`` and ``models`` of the task's training pairs (:func:`task_pairs`)
    x its seeds (``seeds`` on ``seeded_tasks``, else the first) x the arm's FLOP share ``shares['task/model']``
    (its FLOPs per pair over the probe's, counted by the cost benchmark from :func:`arms`; a task off its
    paper-scale source takes the share of its paper-scale grid scaled by its grid points). Batch
    ``train.batch`` (Burgers trains at its ``tasks.burgers.batch``, the FLOPs per pair do not depend on it).
    Left out: the test scoring (next steps and rollouts, forward only), the normalisation pass and the
    SelfWarp timing scan."""
    total = 0.0
    for name, data in PAPER_DATA.items():  # the tasks train.py trains (its TASKS)
        cfg = section["tasks"][name]
        pairs, points = task_pairs(name, cfg)
        scale = 1.0 if cfg.get("source") == data["source"] else points / math.prod(data["grid"])
        seeds = len(section["seeds"]) if name in section["seeded_tasks"] else 1
        total += pairs * seeds * scale * sum(shares[f"{name}/{m}"] for m in section["models"])
    return int(round(section["train"]["epochs"] * total)), int(section["train"]["batch"])
