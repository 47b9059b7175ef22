"""Canonical spectra records (data/spectra/*.parquet) as padded arrays for batching.

Why padded numpy arrays: the embedded data are a few hundred molecules of at most 70 atoms, so
one dense block per set makes every batch a cheap index-and-trim; full-scale data would stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    standardised: dict[tuple[float, float], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def attach_features(self, model: torch.nn.Module) -> None:
        """Precompute per-atom input features once when the backbone has fixed ones (coordinates never change).

        Each chunk of 64 records is trimmed to its longest molecule: pair features cost the square of the width,
        and the embedded molecules have about 20 atoms of the 70 padded. Padding atoms' features are zero either way.
        """
        if self.features is None and hasattr(model, "features") and len(self):
            chunks = []
            with torch.no_grad():
                for i in range(0, len(self), 64):
                    atoms, coords = self.atoms[i : i + 64], self.coords[i : i + 64]
                    width = max(1, int((atoms > 0).sum(1).max()))
                    features = model.features(torch.as_tensor(atoms[:, :width]), torch.as_tensor(coords[:, :width]))
                    chunks.append(np.pad(features.numpy(), ((0, 0), (0, atoms.shape[1] - width), (0, 0))))
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

    def standardised_shifts(self, scale: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
        """Targets and observed shifts of every record in units of ``scale`` (mean, sd), NaN as 0.

        Computed once per scale, since training draws thousands of batches from one set with one scale;
        elementwise, so a batch's slice holds the same floats as standardising the batch itself.
        """
        if scale not in self.standardised:
            mean, sd = scale
            target, observed = ((np.nan_to_num(a) - mean) / sd for a in (self.target, self.observed))
            self.standardised[scale] = target, observed
        return self.standardised[scale]

    def batch(self, rows: np.ndarray, scale: tuple[float, float]) -> dict[str, torch.Tensor]:
        """Tensors of ``rows`` trimmed to their longest molecule; shifts standardised by ``scale`` (mean, sd)."""
        rows = np.asarray(rows, dtype=np.int64)
        width = int(max((self.atoms[rows] > 0).sum(1).max(), self.n_observed[rows].max()))
        target, observed = self.standardised_shifts(scale)
        extra = {} if self.features is None else {"features": torch.as_tensor(self.features[rows, :width])}
        return extra | {
            "atoms": torch.as_tensor(self.atoms[rows, :width], dtype=torch.long),
            "coords": torch.as_tensor(self.coords[rows, :width]),
            "mask": torch.as_tensor(self.mask[rows, :width]),
            "target": torch.as_tensor(target[rows, :width], dtype=torch.float32),
            "observed": torch.as_tensor(observed[rows, :width], dtype=torch.float32),
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
