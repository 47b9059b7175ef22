"""The canonical on-disk layout of every gridded field the PDE and nowcasting papers read.

One zarr store (written through xarray) per data set and resolution. Each variable is float32 with dims
``sample, time, [channel], [y], x``; a ``split`` coordinate on ``sample`` holds ``train``/``val``/``test``;
attrs give the grid spacing (``dx``, ``dy``), the time step ``dt``, whether the domain is ``periodic``,
and the ``source`` (simulator name and settings, or the reader and the original files). Simulators and
readers of the real benchmarks all end in this layout, so downstream stages never know which one ran.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import xarray as xr

from repro.workflow.io import InputError, atomic_path

SPLITS = ("train", "val", "test")
SPATIAL = ("y", "x")
REQUIRED_ATTRS = ("dx", "dt", "source", "periodic")


def dims_of(ndim: int, channel: bool) -> tuple[str, ...]:
    """Dims of a variable with ``ndim`` axes: sample, time, [channel], then one or two spatial axes."""
    lead = ("sample", "time", "channel") if channel else ("sample", "time")
    spatial = ndim - len(lead)
    if spatial not in (1, 2):
        raise ValueError(f"a field needs 1 or 2 spatial axes after {lead}, got array of {ndim} axes")
    return lead + SPATIAL[2 - spatial :]


def make_dataset(
    variables: Mapping[str, np.ndarray],
    split: np.ndarray,
    attrs: Mapping[str, object],
    *,
    channels: Mapping[str, list[str]] | None = None,
    extra: Mapping[str, tuple[tuple[str, ...], np.ndarray]] | None = None,
) -> xr.Dataset:
    """The canonical dataset: float32 variables, a split coordinate, and the grid/time attrs.

    ``channels`` names the channel axis of the variables that have one; ``extra`` adds other
    per-sample arrays (for example the true motion of the radar simulator) with their own dims.
    """
    missing = [k for k in REQUIRED_ATTRS if k not in attrs]
    if missing:
        raise ValueError(f"fields attrs need {missing}")
    channels = dict(channels or {})
    data_vars: dict[str, tuple] = {}
    channel_names = None
    for name, array in variables.items():
        array = np.asarray(array, dtype=np.float32)
        data_vars[name] = (dims_of(array.ndim, name in channels), array)
        if name in channels:
            channel_names = channels[name]
    for name, (dims, array) in (extra or {}).items():
        data_vars[name] = (dims, np.asarray(array, dtype=np.float32))
    split = np.asarray(split).astype(str)
    bad = sorted(set(split) - set(SPLITS))
    if bad:
        raise ValueError(f"split labels {bad} are not in {SPLITS}")
    coords = {"split": ("sample", split.astype(object))}
    if channel_names is not None:
        coords["channel"] = ("channel", np.array(channel_names, dtype=object))
    clean = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in attrs.items()}
    return xr.Dataset(data_vars, coords=coords, attrs=clean | {"periodic": int(bool(attrs["periodic"]))})


def write_fields(path: str | os.PathLike, ds: xr.Dataset) -> None:
    """Write the dataset atomically as a zarr store (one chunk per sample)."""
    encoding = {name: {"chunks": (1,) + ds[name].shape[1:]} for name in ds.data_vars if ds[name].dims[0] == "sample"}
    with atomic_path(path) as tmp:
        ds.to_zarr(tmp, mode="w", encoding=encoding, consolidated=False)


def open_fields(path: str | os.PathLike, variables: tuple[str, ...] = ()) -> xr.Dataset:
    """Open and load a canonical store, checking the layout; bad input names the store and the problem."""
    try:
        ds = xr.open_zarr(str(path), consolidated=False).load()
    except (OSError, ValueError, KeyError) as err:
        raise InputError(path, f"cannot open the fields store ({err})") from err
    missing = [v for v in variables if v not in ds]
    if missing:
        raise InputError(path, f"missing variables {missing} (has {sorted(ds.data_vars)})")
    if "split" not in ds.coords:
        raise InputError(path, "has no 'split' coordinate")
    lacking = [k for k in REQUIRED_ATTRS if k not in ds.attrs]
    if lacking:
        raise InputError(path, f"lacks attrs {lacking}")
    for name in variables:
        if ds[name].dims[:2] != ("sample", "time") or ds[name].dims[-1] != "x":
            raise InputError(
                path, f"variable {name!r} has dims {ds[name].dims}, want (sample, time, [channel], [y], x)"
            )
        if not np.all(np.isfinite(ds[name].values)):
            raise InputError(path, f"variable {name!r} has non-finite values")
    return ds


def split_of(ds: xr.Dataset, name: str) -> xr.Dataset:
    """The samples of one split."""
    return ds.isel(sample=np.flatnonzero(ds.split.values == name))
