"""GPO's training step at paper scale for benchmarks/gpu.py: Navier-Stokes vorticity, periodic, at the training
grid (``ns.resolution``: 32 x 32, FNO's 64 x 64 file subsampled as the data stage does; tests are at 64).

The model is the section's GPO (particles, width, layers, heads); the loss is the training loss with the
particle-alignment term.
"""

from __future__ import annotations

import functools

BATCH_SIZE = 20
STAGE = "train"  # one job per seed: Darcy and Navier-Stokes, GPO and each baseline (workflow/rules/gpo.smk)
# Darcy trains on neuraloperator 0.3.0's ``darcy_train_16`` at every scale (repro.papers.gpo.data.darcy): no
# config key gives its grid
DARCY_RESOLUTION = 16


def build(section: dict, device, resolution: int | None = None, model_name: str = "gpo", periodic: bool = True):
    """(model, batch(size), loss) of one step of ``model_name`` (GPO or a baseline at GPO's parameter count, as
    train.py builds them) on ``resolution``-squared fields (default: the NS training grid, ``ns.resolution``)."""
    import torch

    from repro.papers.gpo.train import build as build_model
    from repro.papers.gpo.train import mse_loss

    resolution = resolution or section["ns"]["resolution"]
    model = build_model(model_name, section, periodic=periodic).to(device)
    align = section["model"]["align_weight"]

    def batch(size: int):
        shape = (size, 1, resolution, resolution)
        return torch.randn(shape, device=device), torch.randn(shape, device=device)

    def loss(net, b):
        return mse_loss(net, b, align)

    return model, batch, loss


def arms(section: dict) -> dict[str, tuple]:
    """``task/model`` -> (build, batch) of every (task, model) a train job trains: GPO and each of
    ``baselines`` on Darcy (:data:`DARCY_RESOLUTION`, not periodic) and NS (``ns.resolution``, periodic), as
    train.py does; the cost benchmark counts each arm's FLOPs per sample against the probe's (NS GPO) to weigh
    its samples in :func:`work`."""
    batch = int(section["train"]["batch"])
    tasks = {"darcy": (DARCY_RESOLUTION, False), "ns": (section["ns"]["resolution"], True)}
    return {
        f"{task}/{name}": (
            functools.partial(build, resolution=resolution, model_name=name, periodic=periodic),
            batch,
        )
        for task, (resolution, periodic) in tasks.items()
        for name in ("gpo", *section["baselines"])
    }


def training_pairs(section: dict) -> dict[str, int]:
    """Training samples per epoch of each task: Darcy's ``darcy.n_train`` fields; NS's ``ns.n_train``
    trajectories x (``ns.frames`` - 1) frame pairs (repro.papers.gpo.train.task_arrays)."""
    ns = section["ns"]
    return {"darcy": int(section["darcy"]["n_train"]), "ns": int(ns["n_train"]) * (int(ns["frames"]) - 1)}


def work(section: dict, shares: dict[str, float]) -> tuple[int, int]:
    """(samples, batch) of one job of the train stage: for each task and each of GPO + ``baselines``,
    ``train.epochs`` epochs over the task's training pairs (:func:`training_pairs`), each arm's samples counted in
    probe (NS GPO) samples by its FLOP share ``shares['task/model']`` (counted by the cost benchmark from
    :func:`arms`; FNO's FFTs are not in the counter's ops, nor in the probe's count, so its share is its
    matmuls' alone); batch ``train.batch``. Left out (forward only): the predictions on every test set (lo, hi,
    irregular points), the exact checks and the forward-time scan."""
    epochs, pairs = int(section["train"]["epochs"]), training_pairs(section)
    models = ("gpo", *section["baselines"])
    samples = sum(shares[f"{task}/{name}"] * epochs * n for task, n in pairs.items() for name in models)
    return int(round(samples)), int(section["train"]["batch"])
