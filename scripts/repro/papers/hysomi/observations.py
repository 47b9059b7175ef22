"""The metagenome benchmark's ``observations.zarr`` read with zarr directly (numpy only, so the figures need no torch).

Why not xarray: opening the store through xarray costs about 0.7 CPU-s per stage (its backend machinery),
more than reading the arrays; the layout is fixed by :mod:`repro.data.metagenome` (one chunk per variable,
NaN as the only fill value, no other encoding), so the arrays are read as they are stored.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from repro.workflow.io import InputError
from repro.workflow.stores import open_zarr_group

PER_SAMPLE = ("value", "observed", "x0", "truth")  # truth: synthetic data only


def read_observations(path: str | os.PathLike, samples: Sequence[str]) -> dict[str, np.ndarray]:
    """``time`` (T,), ``state`` (5,), and of ``samples`` in that order every :data:`PER_SAMPLE` variable stored:
    ``value`` and ``observed`` (N, T, 5), ``x0`` (N, 5), ``truth`` (N, T, 5)."""
    group = open_zarr_group(path)
    index = {s: i for i, s in enumerate(group["sample"][:].tolist())}
    missing = [s for s in samples if s not in index]
    if missing:
        raise InputError(path, f"{len(missing)} samples missing, e.g. {missing[:3]}")
    rows = np.array([index[s] for s in samples], dtype=np.intp)
    out = {"time": group["time"][:], "state": np.array(group["state"][:].tolist())}
    for name in PER_SAMPLE:
        if name in group:
            out[name] = group[name][:][rows]
    return out
