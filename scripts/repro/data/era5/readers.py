"""Open an ERA5 source lazily: zarr through fsspec (gs://, https://, file://, local path), NetCDF, GRIB.

Everything returns an ``xarray.Dataset`` backed by dask, so subsetting a multi-terabyte
WeatherBench2 store reads only the chunks that are kept.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import fsspec
import xarray as xr

from repro.workflow.io import InputError

FORMATS = ("zarr", "netcdf", "grib")


def guess_format(url: str) -> str:
    """Format from the name: ``.zarr`` (also ``.zarr-v3``), ``.nc``/``.nc4``, ``.grib``/``.grb``/``.grib2``."""
    name = url.rstrip("/").lower()
    if ".zarr" in name.rsplit("/", 1)[-1]:
        return "zarr"
    if name.endswith((".nc", ".nc4", ".netcdf")):
        return "netcdf"
    if name.endswith((".grib", ".grb", ".grib2", ".grb2")):
        return "grib"
    raise InputError(url, f"cannot tell the format from the name; give one of {FORMATS}")


def _local_path(url: str) -> Path | None:
    if "://" not in url:
        return Path(url)
    if url.startswith("file://"):
        return Path(url[len("file://") :])
    return None


def open_source(
    url: str,
    fmt: str | None = None,
    storage_options: dict[str, Any] | None = None,
    chunks: Any = None,
    lazy: bool = False,
) -> xr.Dataset:
    """Open ``url`` lazily; a store that does not exist stops with an :class:`InputError` naming it.

    ``chunks`` defaults to the source's own chunks: merging them ("auto") would make every
    per-time-step read decode dozens of time steps. ``lazy=True`` opens without dask (xarray's lazily
    indexed backend arrays, uncached): a block loop then reads exactly the chunks of each block, without
    building a task graph per block.
    """
    chunks = None if lazy else ({} if chunks is None else chunks)
    lazy_options = {"cache": False} if lazy else {}
    fmt = fmt or guess_format(url)
    if fmt not in FORMATS:
        raise InputError(url, f"unknown format {fmt!r}; expected one of {FORMATS}")
    local = _local_path(url)
    if local is not None and not local.exists():
        raise InputError(url, "store does not exist")
    try:
        if fmt == "zarr":
            return _open_zarr(url, storage_options or {}, chunks, lazy_options)
        if fmt == "netcdf":
            path = os.fspath(local) if local else url
            return xr.open_dataset(path, engine="h5netcdf", chunks=chunks, **lazy_options)
        if local is None:
            raise InputError(url, "GRIB is read from local files only (download it first)")
        return xr.open_dataset(local, engine="cfgrib", chunks=chunks, backend_kwargs={"indexpath": ""}, **lazy_options)
    except InputError:
        raise
    except (OSError, ValueError, KeyError) as err:
        raise InputError(url, f"cannot open as {fmt}: {err}") from err


def local_zarr_root(url: str) -> Path | None:
    """The folder of a zarr store given as a local path or ``file://`` URL (None for a remote store)."""
    local = _local_path(url)
    return local if local is not None and local.is_dir() else None


def _open_zarr(url: str, storage_options: dict[str, Any], chunks: Any, lazy_options: dict[str, Any]) -> xr.Dataset:
    """Open a zarr store (format 2 or 3) through fsspec; ``gs://`` is anonymous unless the caller says otherwise."""
    options = dict(storage_options)
    if url.startswith(("gs://", "gcs://")):
        options.setdefault("token", "anon")
    mapper = fsspec.get_mapper(url, **options)
    if not any(k in mapper for k in (".zmetadata", "zarr.json", ".zgroup")):
        raise InputError(url, "store does not exist or is not a zarr store (no .zgroup / zarr.json)")
    consolidated = ".zmetadata" in mapper or _has_consolidated_v3(mapper)
    return xr.open_dataset(
        mapper,
        engine="zarr",
        consolidated=consolidated or None,
        chunks=chunks,
        decode_timedelta=True,
        **lazy_options,
    )


def _has_consolidated_v3(mapper) -> bool:
    import json

    try:
        meta = json.loads(mapper["zarr.json"])
    except KeyError:
        return False
    return bool(meta.get("consolidated_metadata"))
