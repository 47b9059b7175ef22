"""The training helper shared by the field papers (torch; prediction files: repro.workflow.fields_io).

``fit_arrays`` runs repro.learning.training.train over in-memory arrays, or over sources that read the batch's
samples on demand (anything with ``__len__`` and ``take(positions)``, e.g. repro.data.fields.store.Samples over a
store larger than memory), with the batch order of each epoch drawn from ``epoch_rng(seed, epoch)`` (a resumed
run draws the same batches), on a chosen device, and leaves the model on the CPU where predictions and checks
run. ``lr_schedule="cosine"`` decays the learning rate from ``lr`` to zero over the run, a function of (epoch,
batch) only, so a resumed run follows the same schedule. ``save_arrays`` / ``load_arrays`` write and read the
prediction files (npz) atomically, with a clear error for a bad file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch

from repro.learning.training import epoch_rng, train


def fit_arrays(
    model,
    arrays: Sequence[np.ndarray],
    loss: Callable,
    *,
    train_cfg: dict,
    seed: int,
    checkpoint,
    fingerprint: str,
    desc: str,
    device=None,
    grad_clip: float | None = None,
    lr_schedule: str = "constant",
):
    """Minimise ``loss(model, batch)`` (batch = tuple of tensors, one per array) for the configured epochs."""
    if lr_schedule not in ("constant", "cosine"):
        raise ValueError(f"lr_schedule must be 'constant' or 'cosine', got {lr_schedule!r}")
    device = device or torch.device("cpu")
    model.to(device)
    lazy = [not isinstance(a, np.ndarray) for a in arrays]
    tensors = [a if lz else torch.from_numpy(np.ascontiguousarray(a)).to(device) for a, lz in zip(arrays, lazy)]
    size, batch = len(arrays[0]), train_cfg["batch"]
    per_epoch = -(-size // batch)
    optimizer = torch.optim.Adam(model.parameters(), lr=train_cfg["lr"])

    def batches(epoch: int):
        order = epoch_rng(seed, epoch).permutation(size)
        for i, start in enumerate(range(0, len(order), batch)):
            if lr_schedule == "cosine":
                step = epoch * per_epoch + i
                for group in optimizer.param_groups:
                    group["lr"] = (
                        train_cfg["lr"] * 0.5 * (1 + math.cos(math.pi * step / (train_cfg["epochs"] * per_epoch)))
                    )
            rows = order[start : start + batch]
            idx = torch.from_numpy(rows).to(device)
            yield tuple(torch.from_numpy(t.take(rows)).to(device) if lz else t[idx] for t, lz in zip(tensors, lazy))

    result = train(
        model,
        loss,
        batches,
        epochs=train_cfg["epochs"],
        optimizer=optimizer,
        checkpoint=checkpoint,
        checkpoint_every=1,
        grad_clip=grad_clip,
        fingerprint=fingerprint,
        desc=desc,
        seed=seed,
        precision=train_cfg.get("precision", "fp32"),
    )
    model.cpu()
    return result
