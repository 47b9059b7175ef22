"""Reading the canonical data store and the fits store, with clear errors for missing pieces."""

from __future__ import annotations

import os

import numpy as np
import zarr

from repro.workflow.io import InputError


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


def dims(settings: dict, design: str) -> list[int]:
    """Dimensions drawn for ``design``: ``p`` for every design, plus the ``p_sweep`` of the fixed-point rate
    check for 'mixture' (only there is an asymptotic prediction to converge to)."""
    extra = settings["p_sweep"] if design == "mixture" else []
    return sorted(set(settings["p"]) | set(extra))


def families(settings: dict, design: str, p: int) -> list[tuple[str, str, float]]:
    """(loss, regulariser, ratio) of every family of fits of ``design`` at ``p``: all losses and ratios with
    ridge at the main dimensions (plus pseudo-Huber and its surrogate for the ``huber`` designs), only the
    main ratio with ridge at a dimension that exists for the p sweep alone."""
    if p not in settings["p"]:
        return [(loss, "l2", settings["main_ratio"]) for loss in settings["losses"]]
    out = [(loss, "l2", ratio) for loss in settings["losses"] for ratio in settings["ratios"]]
    if design in settings["huber"]["designs"]:
        out += [(settings["huber"]["loss"], reg, settings["main_ratio"]) for reg in ("pseudo_huber", "surrogate")]
    return out
