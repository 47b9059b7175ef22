"""Training and prediction files shared by the field papers (torch for ``fit_arrays``, numpy for the files).

``fit_arrays`` runs repro.training.train over in-memory arrays with the batch order of each epoch drawn
from ``epoch_rng(seed, epoch)`` (a resumed run draws the same batches), on a chosen device, and leaves the
model on the CPU where predictions and checks run. ``save_arrays`` / ``load_arrays`` write and read the
prediction files (npz) atomically, with a clear error for a bad file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import numpy as np

from repro.io import InputError, atomic_path


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
    import torch

    from repro.training import epoch_rng, train

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


def save_arrays(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)


def load_arrays(path: str | os.PathLike) -> dict[str, np.ndarray]:
    try:
        with np.load(path) as content:
            return {k: content[k] for k in content.files}
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read the arrays file ({err})") from err
