"""Canonical spectra records (data/spectra/*.parquet) as padded arrays for batching.

Why padded numpy arrays: the embedded data are a few hundred molecules of at most 70 atoms, so
one dense block per set makes every batch a cheap index-and-trim; full-scale data would stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from repro.data.spectra.solvents import GROUP_IDS


@dataclass
class RecordSet:
    """Padded records of one nucleus: atoms [R, N], coords [R, N, 3], mask/target [R, N], observed [R, N]."""

    frame: pd.DataFrame
    atoms: np.ndarray
    coords: np.ndarray
    mask: np.ndarray
    target: np.ndarray
    observed: np.ndarray
    n_observed: np.ndarray
    solvent: np.ndarray
    features: np.ndarray | None = None

    def attach_features(self, model: torch.nn.Module) -> None:
        """Precompute per-atom input features once when the backbone has fixed ones (coordinates never change)."""
        if self.features is None and hasattr(model, "features") and len(self):
            with torch.no_grad():
                chunks = [
                    model.features(
                        torch.as_tensor(self.atoms[i : i + 64]), torch.as_tensor(self.coords[i : i + 64])
                    ).numpy()
                    for i in range(0, len(self), 64)
                ]
            self.features = np.concatenate(chunks)

    def __len__(self) -> int:
        return len(self.frame)

    def subset(self, rows: np.ndarray) -> RecordSet:
        rows = np.asarray(rows, dtype=np.int64)
        return RecordSet(
            self.frame.iloc[rows].reset_index(drop=True),
            self.atoms[rows],
            self.coords[rows],
            self.mask[rows],
            self.target[rows],
            self.observed[rows],
            self.n_observed[rows],
            self.solvent[rows],
            None if self.features is None else self.features[rows],
        )

    def batch(self, rows: np.ndarray, scale: tuple[float, float]) -> dict[str, torch.Tensor]:
        """Tensors of ``rows`` trimmed to their longest molecule; shifts standardised by ``scale`` (mean, sd)."""
        rows = np.asarray(rows, dtype=np.int64)
        width = int(max((self.atoms[rows] > 0).sum(1).max(), self.n_observed[rows].max()))
        mean, sd = scale
        extra = {} if self.features is None else {"features": torch.as_tensor(self.features[rows, :width])}
        return extra | {
            "atoms": torch.as_tensor(self.atoms[rows, :width], dtype=torch.long),
            "coords": torch.as_tensor(self.coords[rows, :width]),
            "mask": torch.as_tensor(self.mask[rows, :width]),
            "target": torch.as_tensor((np.nan_to_num(self.target[rows, :width]) - mean) / sd, dtype=torch.float32),
            "observed": torch.as_tensor((np.nan_to_num(self.observed[rows, :width]) - mean) / sd, dtype=torch.float32),
            "n_observed": torch.as_tensor(self.n_observed[rows]),
            "solvent": torch.as_tensor(self.solvent[rows], dtype=torch.long),
        }


def load_records(path: str, nucleus: str, width: int = 70) -> RecordSet:
    """Read one canonical parquet and pad the records of ``nucleus``."""
    frame = pd.read_parquet(path)
    frame = frame[frame["nucleus"] == nucleus].reset_index(drop=True)
    r = len(frame)
    atoms = np.zeros((r, width), np.int64)
    coords = np.zeros((r, width, 3), np.float32)
    mask = np.zeros((r, width), bool)
    target = np.full((r, width), np.nan, np.float32)
    observed = np.full((r, width), np.nan, np.float32)
    n_observed = np.zeros(r, np.int64)
    for i, row in enumerate(frame.itertuples(index=False)):
        n = row.n_atoms
        atoms[i, :n] = row.atoms
        coords[i, :n] = np.asarray(row.coordinates, np.float32).reshape(n, 3)
        mask[i, :n] = row.target_mask
        target[i, :n] = row.target
        observed[i, : len(row.observed)] = row.observed
        n_observed[i] = len(row.observed)
    solvent = frame["solvent_group"].map(GROUP_IDS).to_numpy(np.int64)
    return RecordSet(frame, atoms, coords, mask, target, observed, n_observed, solvent)
