"""GPO's training step at paper scale for benchmarks/gpu.py: Navier-Stokes vorticity, periodic, at the training
grid (``ns.resolution``: 32 x 32, FNO's 64 x 64 file subsampled as the data stage does; tests are at 64).

The model is the section's GPO (particles, width, layers, heads); the loss is the training loss with the
particle-alignment term.
"""

from __future__ import annotations

BATCH_SIZE = 20
STAGE = "train"  # one job per seed: Darcy and Navier-Stokes, GPO and each baseline (workflow/rules/gpo.smk)

# FLOPs of one training sample of each (task, model) arm per FLOP of the probe's (ns, gpo) sample, counted with
# repro.learning.step_cost (torch's FlopCounterMode, forward + backward) at full.yaml's sizes (width 64, 256
# particles, 4 layers, 8 heads, 12 FNO modes; NS at 32 x 32 periodic, Darcy at 16 x 16). FNO's FFTs are not in
# the counter's ops (nor in the probe's count), so its share is its matmuls' alone.
ARM_FLOP_SHARE = {
    ("ns", "gpo"): 1.0,
    ("ns", "fno"): 0.005,
    ("ns", "galerkin"): 0.745,
    ("darcy", "gpo"): 0.476,
    ("darcy", "fno"): 0.001,
    ("darcy", "galerkin"): 0.186,
}


def build(section: dict, device, resolution: int | None = None):
    """(model, batch(size), loss) of one GPO step on ``resolution``-squared periodic fields (default: the NS
    training grid, ``ns.resolution``)."""
    import torch

    from repro.papers.gpo.train import build as build_model
    from repro.papers.gpo.train import mse_loss

    resolution = resolution or section["ns"]["resolution"]
    model = build_model("gpo", section, periodic=True).to(device)
    align = section["model"]["align_weight"]

    def batch(size: int):
        shape = (size, 1, resolution, resolution)
        return torch.randn(shape, device=device), torch.randn(shape, device=device)

    def loss(net, b):
        return mse_loss(net, b, align)

    return model, batch, loss


def training_pairs(section: dict) -> dict[str, int]:
    """Training samples per epoch of each task: Darcy's ``darcy.n_train`` fields; NS's ``ns.n_train``
    trajectories x (``ns.frames`` - 1) frame pairs (repro.papers.gpo.train.task_arrays)."""
    ns = section["ns"]
    return {"darcy": int(section["darcy"]["n_train"]), "ns": int(ns["n_train"]) * (int(ns["frames"]) - 1)}


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of one job of the train stage: for each task and each of GPO + ``baselines``,
    ``train.epochs`` epochs over the task's training pairs (:func:`training_pairs`), each arm's samples counted in
    probe (NS GPO) samples by :data:`ARM_FLOP_SHARE`; batch ``train.batch``. Left out (forward only): the
    predictions on every test set (lo, hi, irregular points), the exact checks and the forward-time scan."""
    epochs, pairs = int(section["train"]["epochs"]), training_pairs(section)
    arms = ("gpo", *section["baselines"])
    samples = sum(ARM_FLOP_SHARE[task, name] * epochs * n for task, n in pairs.items() for name in arms)
    return int(round(samples)), int(section["train"]["batch"])
