"""Prediction files of the field papers (npz, numpy only): written atomically, read with a clear error."""

from __future__ import annotations

import os

import numpy as np

from repro.workflow.io import InputError, atomic_path


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
