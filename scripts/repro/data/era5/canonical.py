"""Turn any opened ERA5 source into the canonical layout, lazily, or say exactly what is wrong.

Canonical: WB2 names, dims ``(time, [realization], [level], latitude, longitude)``, latitude
ascending, longitude in [0, 360) ascending, float32. Sources differ in all of these (WB2 0.25°
stores latitude 90 -> -90, CDS NetCDF may use -180..180, cfgrib says ``isobaricInhPa``), so the
orientation is detected, never assumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

from repro.data.era5.names import CANONICAL_ORDER, DIM_ALIASES, SPATIAL_DIMS, VARIABLE_ALIASES
from repro.workflow.io import InputError


@dataclass(frozen=True)
class Selection:
    """What to keep: variables (WB2 names), pressure levels (hPa), time range, time step."""

    variables: Sequence[str]
    levels: Sequence[float] = ()
    start: str | None = None
    end: str | None = None
    step_hours: int | None = None
    members: Sequence[int] = field(default_factory=tuple)


def rename_to_wb2(ds: xr.Dataset) -> xr.Dataset:
    """Rename short variable names and dim aliases to the WB2 spelling."""
    if "valid_time" in ds.variables and "time" in ds.dims:
        ds = ds.drop_vars("valid_time")
    elif "valid_time" in ds.dims and "time" in ds.variables:
        ds = ds.drop_vars("time")
    renames = {k: v for k, v in DIM_ALIASES.items() if k in ds.variables or k in ds.dims}
    return ds.rename(renames | _variable_renames(ds))


def _variable_renames(ds: xr.Dataset) -> dict[str, str]:
    """Short source names that get their WB2 name (a WB2 name already present wins)."""
    return {k: v for k, v in VARIABLE_ALIASES.items() if k in ds.data_vars and v not in ds.data_vars}


def canonical_longitude(ds: xr.Dataset, where: str) -> xr.Dataset:
    """Wrap longitudes into [0, 360) and sort them (a -180..180 grid becomes 0..360)."""
    lon = np.asarray(ds["longitude"].values, dtype=np.float64)
    wrapped = np.mod(lon, 360.0)
    if len(np.unique(wrapped)) != len(wrapped):
        raise InputError(where, "longitudes repeat after wrapping to [0, 360)")
    ds = ds.assign_coords(longitude=("longitude", wrapped, ds["longitude"].attrs))
    order = np.argsort(wrapped, kind="stable")
    return ds if np.all(order == np.arange(len(order))) else ds.isel(longitude=order)


def canonical_latitude(ds: xr.Dataset) -> xr.Dataset:
    """Make latitude ascending (south to north); idempotent."""
    lat = np.asarray(ds["latitude"].values)
    if lat.size > 1 and lat[0] > lat[-1]:
        return ds.isel(latitude=slice(None, None, -1))
    return ds


def _check_dims(ds: xr.Dataset, variables: Sequence[str], where: str) -> None:
    for dim in SPATIAL_DIMS:
        if dim not in ds.dims:
            raise InputError(where, f"wrong dims: no {dim!r} dimension (dims are {sorted(map(str, ds.dims))})")
        if ds.sizes[dim] < 2:
            raise InputError(where, f"wrong dims: {dim!r} has {ds.sizes[dim]} point(s)")
    for name in variables:
        dims = ds[name].dims
        unknown = [d for d in dims if d not in CANONICAL_ORDER]
        if unknown or not set(SPATIAL_DIMS) <= set(dims):
            raise InputError(
                where,
                f"wrong dims for {name!r}: {dims}; expected a subset of {CANONICAL_ORDER} with latitude and longitude",
            )


def _select_levels(ds: xr.Dataset, levels: Sequence[float], variables: Sequence[str], where: str) -> xr.Dataset:
    if not any("level" in ds[v].dims for v in variables):
        return ds.drop_dims("level", errors="ignore")
    if not levels:
        return ds
    available = np.asarray(ds["level"].values, dtype=float)
    missing = [lev for lev in levels if not np.any(np.isclose(available, lev))]
    if missing:
        raise InputError(where, f"missing level(s) {missing} hPa; the store has {available.tolist()}")
    index = [int(np.flatnonzero(np.isclose(available, lev))[0]) for lev in levels]
    return ds.isel(level=index)


def _select_time(ds: xr.Dataset, sel: Selection, where: str) -> xr.Dataset:
    if "time" not in ds.dims:
        return ds
    times = pd.DatetimeIndex(ds["time"].values)
    keep = np.ones(len(times), bool)
    if sel.start:
        keep &= times >= pd.Timestamp(sel.start)
    if sel.end:
        end = pd.Timestamp(sel.end)
        if len(str(sel.end)) <= 10:  # a date alone means the whole day
            end += pd.Timedelta(days=1) - pd.Timedelta(1, "ns")
        keep &= times <= end
    if sel.step_hours:
        hours = (times - times[keep][0] if keep.any() else times - times[0]) / pd.Timedelta(hours=1)
        keep &= np.isclose(np.mod(hours, sel.step_hours), 0)
    if not keep.any():
        raise InputError(where, f"no time steps in {sel.start} .. {sel.end} (store covers {times[0]} .. {times[-1]})")
    return ds.isel(time=np.flatnonzero(keep))


INDEX_PREFIX = "source_index_"


@dataclass(frozen=True)
class SourceIndex:
    """Where canonical variable ``name`` comes from: the source's variable, its dims, and per dim the indices."""

    name: str
    dims: tuple[str, ...]
    indices: dict[str, np.ndarray]


def _to_float32(var: xr.DataArray) -> xr.DataArray:
    """Cast dask or in-memory data; leave lazily indexed backend arrays alone (casting those loads them whole)."""
    if var.chunks is not None or var.variable._in_memory:
        return var.astype(np.float32)
    return var


def canonicalise_indexed(ds: xr.Dataset, sel: Selection, where: str) -> tuple[xr.Dataset, dict[str, SourceIndex]]:
    """:func:`canonicalise`, and for each variable the source indices each canonical position was taken from.

    The indices are tracked by coordinates attached before any selection, so they are exactly what the
    selections did, whatever their order; a chunk reader uses them to read the source without xarray.
    """
    wb2_names = _variable_renames(ds)
    source_names = {wb2_names.get(str(v), str(v)): str(v) for v in ds.data_vars}
    ds = rename_to_wb2(ds)
    source_dims = {str(v): tuple(map(str, ds[v].dims)) for v in ds.data_vars}
    missing = [v for v in sel.variables if v not in ds.data_vars]
    if missing:
        raise InputError(where, f"missing variable(s) {missing}; the store has {sorted(map(str, ds.data_vars))}")
    _check_dims(ds, sel.variables, where)
    ds = ds[list(sel.variables)]
    ds = ds.assign_coords({INDEX_PREFIX + str(d): (d, np.arange(ds.sizes[d])) for d in ds.dims})
    ds = _select_levels(ds, sel.levels, sel.variables, where)
    ds = _select_time(ds, sel, where)
    if sel.members and "realization" in ds.dims:
        ds = ds.sel(realization=list(sel.members))
    ds = canonical_latitude(canonical_longitude(ds, where))
    index = {str(d): np.asarray(ds[INDEX_PREFIX + str(d)].values) for d in ds.dims}
    keep_coords = set(CANONICAL_ORDER)
    ds = ds.drop_vars([c for c in ds.coords if c not in keep_coords])
    out = xr.Dataset(coords={c: ds[c] for c in ds.coords})
    plan = {}
    for name in sel.variables:
        var = ds[name]
        order = [d for d in CANONICAL_ORDER if d in var.dims]
        out[name] = _to_float32(var.transpose(*order))
        out[name].attrs = {k: v for k, v in var.attrs.items() if isinstance(v, (str, int, float))}
        dims = source_dims[name]
        plan[name] = SourceIndex(source_names[name], dims, {d: index[d] for d in dims})
    out["latitude"] = out["latitude"].astype(np.float64)
    out["longitude"] = out["longitude"].astype(np.float64)
    return out, plan


def canonicalise(ds: xr.Dataset, sel: Selection, where: str) -> xr.Dataset:
    """Lazily subset ``ds`` to ``sel`` in the canonical layout; ``where`` names the store in errors.

    Dask-backed and in-memory variables come out float32; lazily indexed backend arrays (a source opened
    with ``lazy=True``) keep their dtype until the writer casts each block it reads.
    """
    return canonicalise_indexed(ds, sel, where)[0]


def channel_names(ds: xr.Dataset) -> list[str]:
    """Stacked channel names in store order: ``geopotential_500`` for level variables, the name otherwise."""
    names = []
    for name in ds.data_vars:
        if "level" in ds[name].dims:
            names += [f"{name}_{int(lev)}" for lev in ds["level"].values]
        else:
            names.append(str(name))
    return names
