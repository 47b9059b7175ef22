"""The Darcy and Burgers samples shipped in the neuraloperator 0.3.0 wheel, in the canonical arrays.

Torch tensor files, read with ``torch.load(weights_only=True)`` from the package-data folder, never by
installing neuralop (kept apart from repro.data.fields.readers so that numpy-only stages need no torch).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError

NEURALOP_DATA = "neuralop/datasets/data"


def _torch_dict(path: Path, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    import torch

    if not path.is_file():
        raise InputError(path, "missing (fetch the neuraloperator package data first)")
    try:
        content = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as err:  # torch raises several unrelated types for a corrupt file
        raise InputError(path, f"not a torch tensor file ({err})") from err
    missing = [k for k in keys if not isinstance(content, dict) or k not in content]
    if missing:
        raise InputError(path, f"lacks tensors {missing}")
    return {k: content[k].double().numpy() for k in keys}


def neuraloperator_darcy(folder: str | os.PathLike, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(permeability, pressure) arrays (sample, y, x) of ``darcy_<name>.pt`` (train_16, test_16, test_32)."""
    arrays = _torch_dict(Path(folder) / NEURALOP_DATA / f"darcy_{name}.pt", ("x", "y"))
    return arrays["x"].astype(np.float32), arrays["y"].astype(np.float32)


def neuraloperator_burgers(folder: str | os.PathLike) -> tuple[np.ndarray, float]:
    """Burgers trajectories (sample, time, x) of ``burgers_lowres.pt`` and their viscosity."""
    arrays = _torch_dict(Path(folder) / NEURALOP_DATA / "burgers_lowres.pt", ("input", "output", "visc"))
    u = arrays["output"]
    if u.ndim != 3 or not np.allclose(u[:, 0], arrays["input"]):
        raise InputError(Path(folder) / NEURALOP_DATA / "burgers_lowres.pt", "output[:, 0] should equal input")
    return u.astype(np.float32), float(arrays["visc"].ravel()[0])
