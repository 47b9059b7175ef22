"""Reading the canonical data stores and the masks store, with clear errors for missing pieces."""

from __future__ import annotations

import os

import numpy as np

from repro.workflow.io import InputError
from repro.workflow.stores import open_zarr_group

DATASET_VARIABLES = ("X", "y", "split")


def read_dataset(path: str | os.PathLike) -> dict:
    """X, y, split and attributes of a canonical dataset store."""
    group = open_zarr_group(path)
    missing = [v for v in DATASET_VARIABLES if v not in group]
    if missing:
        raise InputError(path, f"missing variable(s) {missing}")
    out = {v: np.asarray(group[v][...]) for v in DATASET_VARIABLES}
    if out["X"].ndim != 2 or len(out["X"]) != len(out["y"]) or len(out["y"]) != len(out["split"]):
        raise InputError(path, f"inconsistent shapes X{out['X'].shape}, y{out['y'].shape}, split{out['split'].shape}")
    out["informative_idx"] = list(group.attrs.get("informative_idx", []))
    out["n_classes"] = int(group.attrs.get("n_classes", int(out["y"].max()) + 1))
    return out


def mask_key(criterion: str, width: int, seed: int) -> str:
    """Group of one mask set (one array per layer) inside a masks store."""
    return f"{criterion}/w{width}/s{seed}"
