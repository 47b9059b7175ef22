"""The training helper shared by the field papers (torch; prediction files: repro.workflow.fields_io).

``fit_arrays`` runs repro.learning.training.train over in-memory arrays with the batch order of each epoch drawn
from ``epoch_rng(seed, epoch)`` (a resumed run draws the same batches), on a chosen device, and leaves the
model on the CPU where predictions and checks run. ``save_arrays`` / ``load_arrays`` write and read the
prediction files (npz) atomically, with a clear error for a bad file.
"""

from __future__ import annotations

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
):
    """Minimise ``loss(model, batch)`` (batch = tuple of tensors, one per array) for the configured epochs."""
    device = device or torch.device("cpu")
    model.to(device)
    tensors = [torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in arrays]

    def batches(epoch: int):
        order = epoch_rng(seed, epoch).permutation(len(tensors[0]))
        for start in range(0, len(order), train_cfg["batch"]):
            idx = torch.from_numpy(order[start : start + train_cfg["batch"]]).to(device)
            yield tuple(t[idx] for t in tensors)

    result = train(
        model,
        loss,
        batches,
        epochs=train_cfg["epochs"],
        optimizer=torch.optim.Adam(model.parameters(), lr=train_cfg["lr"]),
        checkpoint=checkpoint,
        checkpoint_every=1,
        grad_clip=grad_clip,
        fingerprint=fingerprint,
        desc=desc,
        seed=seed,
    )
    model.cpu()
    return result
