"""Reading the canonical data stores and the masks store, with clear errors for missing pieces."""

from __future__ import annotations

import os

import numpy as np
import zarr

from repro.io import InputError

DATASET_VARIABLES = ("X", "y", "split")


def open_group(path: str | os.PathLike, key: str = "") -> zarr.Group:
    """Open the zarr group ``key`` of ``path`` or raise InputError naming the store and the key."""
    try:
        root = zarr.open_group(str(path), mode="r")
    except (FileNotFoundError, zarr.errors.GroupNotFoundError) as err:
        raise InputError(path, "not a zarr group (missing or unreadable store)") from err
    if not key:
        return root
    try:
        return root[key]
    except KeyError as err:
        raise InputError(path, f"has no group {key!r}") from err


def read_dataset(path: str | os.PathLike) -> dict:
    """X, y, split and attributes of a canonical dataset store."""
    group = open_group(path)
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
