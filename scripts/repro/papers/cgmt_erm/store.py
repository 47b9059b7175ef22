"""Reading the canonical data store and the fits store, with clear errors for missing pieces."""

from __future__ import annotations

import os

import numpy as np
import zarr

from repro.io import InputError


def read(group: zarr.Group, name: str, path: str | os.PathLike) -> np.ndarray:
    """Array ``name`` of ``group`` as numpy, or InputError naming the store and the missing variable."""
    if name not in group:
        raise InputError(path, f"group {group.path!r} lacks variable {name!r}")
    return np.asarray(group[name][...])


def fit_key(loss: str, reg: str, ratio: float) -> str:
    """Name of one family of fits inside a design's fits group."""
    return f"{loss}__{reg}__ratio{ratio:g}"


def train_arrays(group: zarr.Group, path: str | os.PathLike) -> tuple[zarr.Array, zarr.Array]:
    """The (lazy) training-set arrays X_train (rep, sample, feature) and y_train (rep, sample)."""
    for name in ("X_train", "y_train"):
        if name not in group:
            raise InputError(path, f"group {group.path!r} lacks variable {name!r}")
    X, Y = group["X_train"], group["y_train"]
    if X.shape[:2] != Y.shape:
        raise InputError(path, f"group {group.path!r}: X_train {X.shape} and y_train {Y.shape} disagree")
    return X, Y
