"""Reading the canonical ATLAS layout and turning trajectories into training windows.

A window is an anchor frame and the ``W`` following frames aligned on it, as displacements;
its slots are either IWFD spectral features (``K = W // 2 + 1`` bands x 6) or the ``W``
time steps (x 3). Slots are divided by a per-slot scale measured on the training windows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from repro.data.atlas.layout import ca_name
from repro.papers.biodynaspec.geometry import superpose
from repro.papers.biodynaspec.iwfd import spectrum_to_window, window_spectrum
from repro.workflow.io import InputError

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
REPRESENTATIONS = ("spectral", "time")


def residue_types(sequence: str) -> np.ndarray:
    """Index 0-19 of each one-letter code, 20 for anything else."""
    return np.array([AMINO_ACIDS.find(c) if c in AMINO_ACIDS else 20 for c in sequence], dtype=np.int64)


def load_ca(processed: Path, name: str, replicate: int) -> np.ndarray:
    path = Path(processed) / name / ca_name(name, replicate)
    if not path.exists():
        raise InputError(path, f"protein {name}: replicate R{replicate} not preprocessed")
    return np.load(path)


def read_meta(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path)


def sliding_windows(ca: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Every anchor position: anchors ``[n, L, 3]`` and aligned displacements ``[n, W, L, 3]``."""
    n = len(ca) - size
    if n < 1:
        return np.empty((0,) + ca.shape[1:]), np.empty((0, size) + ca.shape[1:])
    anchors = ca[:n]
    frames = np.stack([ca[a + 1 : a + size + 1] for a in range(n)])
    return anchors, superpose(frames, anchors[:, None]) - anchors[:, None]


def to_slots(delta: np.ndarray, representation: str) -> np.ndarray:
    """Displacement windows ``[..., W, L, 3]`` -> slots ``[..., S, L, F]``."""
    if representation == "spectral":
        return window_spectrum(delta)
    if representation == "time":
        return delta
    raise ValueError(f"unknown representation {representation!r}")


def from_slots(slots: np.ndarray, representation: str, size: int) -> np.ndarray:
    return spectrum_to_window(slots, size) if representation == "spectral" else slots


def slot_scales(slots: np.ndarray) -> np.ndarray:
    """Root-mean-square of each slot over windows, residues and features (``[S]``; never 0)."""
    rms = np.sqrt((slots**2).mean(axis=(0, 2, 3)))
    return np.where(rms > 1e-6, rms, 1.0)


@dataclass
class WindowSet:
    """Training windows of one protein."""

    name: str
    types: np.ndarray
    anchors: np.ndarray
    deltas: np.ndarray


def training_windows(
    processed: Path, meta: pd.DataFrame, names: list[str], replicates: list[int], size: int
) -> list[WindowSet]:
    """Sliding windows of every listed protein's wanted replicates."""
    sets = []
    for name in names:
        rows = meta[(meta["name"] == name) & meta["replicate"].isin(replicates)]
        if rows.empty:
            continue
        parts = [sliding_windows(load_ca(processed, name, int(r)), size) for r in rows["replicate"]]
        anchors = np.concatenate([p[0] for p in parts])
        if len(anchors) == 0:
            continue
        sets.append(
            WindowSet(name, residue_types(rows["sequence"].iloc[0]), anchors, np.concatenate([p[1] for p in parts]))
        )
    return sets
