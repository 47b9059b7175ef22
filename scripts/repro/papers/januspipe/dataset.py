"""The EMT configurations as torch batches, the species reference energies and the cutoff check."""

from __future__ import annotations

import numpy as np
import torch

from repro.papers.januspipe.model import SPECIES, Batch, onehot
from repro.workflow.io import InputError

KEYS = ("positions", "cells", "numbers", "energy", "forces", "split")


def load(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path) as z:
            data = {k: z[k] for k in KEYS}
    except (OSError, KeyError, ValueError) as err:
        raise InputError(path, f"not a configurations file with {KEYS} ({err})") from err
    if not np.all(np.isfinite(data["forces"])) or not np.all(np.isfinite(data["energy"])):
        raise InputError(path, "non-finite energies or forces")
    unknown = set(np.unique(data["numbers"])) - set(SPECIES)
    if unknown:
        raise InputError(path, f"atomic numbers {sorted(unknown)} outside the model's species {SPECIES}")
    return data


def check_cutoff(path: str, cells: np.ndarray, cutoff: float) -> None:
    """The minimum-image descriptor needs the cutoff below half of every cell's smallest perpendicular width."""
    volume = np.abs(np.linalg.det(cells))
    widths = np.stack([volume / np.linalg.norm(np.cross(cells[:, i - 2], cells[:, i - 1]), axis=1) for i in range(3)])
    if cutoff >= widths.min() / 2:
        raise InputError(path, f"cutoff {cutoff} Å >= half the smallest cell width {widths.min() / 2:.3f} Å")


def batch(data: dict[str, np.ndarray], idx: np.ndarray) -> Batch:
    return Batch(
        torch.as_tensor(data["positions"][idx], dtype=torch.float64),
        torch.as_tensor(data["cells"][idx], dtype=torch.float64),
        onehot(data["numbers"][idx]),
        torch.as_tensor(data["energy"][idx], dtype=torch.float64),
        torch.as_tensor(data["forces"][idx], dtype=torch.float64),
    )


def species_energies(data: dict[str, np.ndarray], idx: np.ndarray) -> torch.Tensor:
    """Least-squares per-species reference energies (eV) from the training structures' compositions."""
    counts = onehot(data["numbers"][idx]).sum(1).numpy()
    coef = np.linalg.lstsq(counts, data["energy"][idx], rcond=None)[0]
    return torch.as_tensor(coef, dtype=torch.float64)
