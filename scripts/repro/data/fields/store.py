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

from repro.data.era5.chunks import chunk_array
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


def open_fields(
    path: str | os.PathLike, variables: tuple[str, ...] = (), *, load: bool = True, missing_ok: tuple[str, ...] = ()
) -> xr.Dataset:
    """Open a canonical store, checking the layout; bad input names the store and the problem.

    ``load=False`` keeps the variables lazy (dask over the zarr chunks: one sample per chunk), for stores larger
    than memory; the finiteness check then runs where the data is read. Variables in ``missing_ok`` may hold NaN
    (missing data); the others must be finite.
    """
    try:
        ds = xr.open_zarr(str(path), consolidated=False)
        if load:
            ds = ds.load()
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
        if load and name not in missing_ok and not np.all(np.isfinite(ds[name].values)):
            raise InputError(path, f"variable {name!r} has non-finite values")
    return ds


def split_labels(ds: xr.Dataset) -> np.ndarray:
    """The ``split`` coordinate as plain strings (zarr 3 stores it in numpy's variable-width string dtype)."""
    return np.array([str(label) for label in ds["split"].values])


def split_of(ds: xr.Dataset, name: str) -> xr.Dataset:
    """The samples of one split."""
    return ds.isel(sample=np.flatnonzero(ds.split.values == name))


class FieldsWriter:
    """A canonical store written block by block: the layout first, then samples, then the split labels.

    ``variables`` maps a name to (dims, shape) or (dims, shape, chunks) with ``sample`` first and the shape's first
    entry the most samples the store may get (chunks default to one sample each); :meth:`write` fills samples ``[start, start + len(values))`` of one variable, so a reader
    streams events into the store with memory flat in their number; :meth:`finish` cuts the store to the samples
    written (a refused event leaves none) and writes their split labels, any other per-sample coordinates and
    attrs. Use as a context manager: the store appears at ``path`` only once complete.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        variables: Mapping[str, tuple[tuple[str, ...], tuple[int, ...]]],
        attrs: Mapping[str, object],
        *,
        channels: list[str] | None = None,
    ):
        self.path, self.variables, self.attrs, self.channels = path, dict(variables), dict(attrs), channels
        self._ctx = None
        self._tmp = None
        self._arrays: dict = {}
        self._finished = False

    def __enter__(self) -> FieldsWriter:
        import dask.array as da
        import zarr

        self._chunking = {
            name: tuple(spec[2]) if len(spec) > 2 else (1,) + tuple(spec[1][1:])
            for name, spec in self.variables.items()
        }
        template = {
            name: (spec[0], da.zeros(spec[1], chunks=self._chunking[name], dtype=np.float32))
            for name, spec in self.variables.items()
        }
        coords = {}
        if self.channels is not None:
            coords["channel"] = ("channel", np.array(self.channels, dtype=object))
        self._ctx = atomic_path(self.path)
        self._tmp = self._ctx.__enter__()
        encoding = {name: {"chunks": chunks} for name, chunks in self._chunking.items()}
        xr.Dataset(template, coords=coords).to_zarr(
            self._tmp, mode="w", compute=False, encoding=encoding, consolidated=False
        )
        self._arrays = {name: zarr.open_array(f"{self._tmp}/{name}", mode="r+") for name in self.variables}
        self._chunks = {name: chunk_array(self._tmp, name) for name in self.variables}
        return self

    def write(self, name: str, start: int, values: np.ndarray) -> None:
        """Samples ``[start, start + len(values))`` of ``name``, one chunk file per sample (no zarr-python round trip)."""
        values = np.asarray(values, dtype=np.float32)
        chunks = self._chunks[name]
        if chunks is None or self._chunking[name][1:] != values.shape[1:]:
            self._arrays[name][start : start + len(values)] = values
            return
        zeros = (0,) * (values.ndim - 1)
        for i, sample in enumerate(values):
            chunks.write_chunk((start + i, *zeros), sample[None])

    def finish(
        self,
        split: np.ndarray,
        coords: Mapping[str, np.ndarray] | None = None,
        attrs: Mapping[str, object] | None = None,
    ) -> None:
        """Keep the first ``len(split)`` samples, label them, add per-sample ``coords`` and ``attrs``."""
        import zarr

        attrs = self.attrs | dict(attrs or {})
        missing = [k for k in REQUIRED_ATTRS if k not in attrs]
        if missing:
            raise ValueError(f"fields attrs need {missing}")
        split = np.array([str(label) for label in split], dtype=str)
        bad = sorted(set(split) - set(SPLITS))
        if bad:
            raise ValueError(f"split labels {bad} are not in {SPLITS}")
        n = len(split)
        for array in self._arrays.values():
            array.resize((n,) + array.shape[1:])
        extra = {"split": ("sample", split.astype(object))}
        extra |= {k: ("sample", np.asarray(v)) for k, v in (coords or {}).items()}
        xr.Dataset(coords=extra).to_zarr(self._tmp, mode="a", consolidated=False)
        clean = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in attrs.items()}
        zarr.open_group(self._tmp, mode="r+").attrs.update(clean | {"periodic": int(bool(attrs["periodic"]))})
        self._finished = True

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None and not self._finished:
            kind, value = RuntimeError, RuntimeError(f"{self.path}: FieldsWriter closed without finish()")
            self._ctx.__exit__(kind, value, None)
            raise value
        self._ctx.__exit__(kind, value, traceback)


class Samples:
    """Samples of one store variable read on demand: ``len``, and ``take(index)`` -> float32 array.

    ``index`` selects samples of the store (for example one split); ``take`` reads only the requested ones, so
    training over a store larger than memory draws its batches from disk. With ``cache_mb`` at least the
    selection's size, everything is read once into memory instead (the same values, fewer reads).
    """

    def __init__(
        self, ds: xr.Dataset, name: str, index: np.ndarray, *, cache_mb: float = 0.0, fill: float | None = None
    ):
        self.var = ds[name]
        self.index = np.asarray(index, dtype=np.int64)
        self.fill = fill
        self.shape = (len(self.index),) + tuple(self.var.shape[1:])
        nbytes = 4 * int(np.prod(self.shape))
        self._cache = self._read(self.index) if nbytes <= cache_mb * 2**20 else None

    def __len__(self) -> int:
        return len(self.index)

    def _read(self, rows: np.ndarray) -> np.ndarray:
        order = np.argsort(rows, kind="stable")
        values = np.asarray(self.var.isel(sample=rows[order]).values, dtype=np.float32)
        out = np.empty_like(values)
        out[order] = values
        return out if self.fill is None else np.nan_to_num(out, nan=self.fill)

    def take(self, positions: np.ndarray) -> np.ndarray:
        positions = np.asarray(positions, dtype=np.int64)
        if self._cache is not None:
            return self._cache[positions]
        return self._read(self.index[positions])
