"""The Well's HDF5 files, read one trajectory at a time (2-D data sets).

Layout (The Well documentation, "Data format", polymathic-ai.org/the_well/data_format, and the_well's
``WellDataset`` reader; Ohana et al., NeurIPS 2024 Datasets and Benchmarks):
- root attrs ``dataset_name``, ``grid_type``, ``n_spatial_dims``, ``n_trajectories``, ``simulation_parameters``;
- ``dimensions/time`` (time,), ``dimensions/x``, ``dimensions/y`` (the cell-centre coordinates; the group's attr
  ``spatial_dims`` gives their order), each with attrs ``sample_varying`` and ``time_varying``;
- ``boundary_conditions/<name>`` groups with attrs ``bc_type`` (``PERIODIC``, ``WALL``, ``OPEN``),
  ``associated_dims`` and a boolean ``mask`` over the cells of that dimension the condition applies to;
- ``t0_fields/<name>`` scalars, ``t1_fields/<name>`` vectors (trailing axis of 2), ``t2_fields`` tensors, each
  with attrs ``sample_varying``, ``time_varying`` and ``dim_varying``: a field is stored
  (traj?, time?, x, y[, 2]) with the trajectory axis only when ``sample_varying`` and the time axis only when
  ``time_varying``: ``density`` and ``speed_of_sound`` of acoustic_scattering_maze have no time axis.

What the reader makes of it: fields (time, channel, y, x) per trajectory (a time-constant field repeated over
time when asked for as a dynamic field, or as a static (channel, y, x) input), the grid spacing dx, dy from the
coordinates (shear_flow and the maze span [-1, 1], not a unit square), and periodicity per axis from the boundary
conditions, whose masks mark the cells of the non-periodic boundaries. Every problem is an InputError naming the
file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from repro.data.fields.readers import open_h5
from repro.workflow.io import InputError

AXES = ("x", "y")


@dataclass
class WellFile:
    """What one file holds, read from its metadata only."""

    path: str
    n_traj: int
    n_time: int
    dt: float
    spacing: dict[str, float]
    periodic: dict[str, bool]
    boundary: dict[str, np.ndarray]  # per axis: cells on a non-periodic boundary
    fields: dict[str, tuple[str, bool, bool]] = field(default_factory=dict)  # name -> (group, sample_v, time_v)
    shape: tuple[int, int] = (0, 0)  # (x, y)


def _h5(path: str | os.PathLike):
    return open_h5(path, "a The Well HDF5 file the config lists")


def _flag(node, name: str, default: bool = True) -> bool:
    return bool(node.attrs.get(name, default))


def describe(path: str | os.PathLike) -> WellFile:
    """Metadata of one 2-D The Well file, checked."""
    with _h5(path) as f:
        dims = int(f.attrs.get("n_spatial_dims", 0))
        if dims != 2:
            raise InputError(path, f"n_spatial_dims is {dims}; this reader handles 2-D data sets")
        if "dimensions" not in f or any(k not in f["dimensions"] for k in ("time", *AXES)):
            raise InputError(path, "needs dimensions/time, dimensions/x and dimensions/y")
        time = np.asarray(f["dimensions"]["time"][...], dtype=float)
        if time.ndim != 1 or time.size < 2:
            raise InputError(path, f"dimensions/time has shape {time.shape}; need at least two times")
        coords = {a: np.asarray(f["dimensions"][a][...], dtype=float) for a in AXES}
        spacing = {}
        for axis, c in coords.items():
            steps = np.diff(c.reshape(-1) if c.ndim == 1 else c[0])
            if steps.size < 1 or not np.allclose(steps, steps[0], rtol=1e-4) or steps[0] <= 0:
                raise InputError(path, f"dimensions/{axis} is not a uniform ascending grid")
            spacing[axis] = float(steps[0])
        periodic = {a: False for a in AXES}
        boundary = {a: np.zeros(coords[a].shape[-1], bool) for a in AXES}
        for name, bc in f["boundary_conditions"].items() if "boundary_conditions" in f else []:
            kind = bc.attrs.get("bc_type", b"")
            kind = kind.decode() if isinstance(kind, bytes) else str(kind)
            assoc = bc.attrs.get("associated_dims", [])
            assoc = [a.decode() if isinstance(a, bytes) else str(a) for a in np.atleast_1d(assoc)]
            for axis in assoc:
                if axis not in AXES:
                    raise InputError(path, f"boundary condition {name!r} names unknown dim {axis!r}")
                if kind.upper() == "PERIODIC":
                    periodic[axis] = True
                elif "mask" in bc:
                    mask = np.asarray(bc["mask"][...], bool).reshape(-1)
                    if mask.size != boundary[axis].size:
                        raise InputError(
                            path,
                            f"boundary_conditions/{name}/mask has {mask.size} cells, {axis} has {boundary[axis].size}",
                        )
                    boundary[axis] |= mask
        fields: dict[str, tuple[str, bool, bool]] = {}
        for group in ("t0_fields", "t1_fields"):
            for name, ds in f[group].items() if group in f else []:
                fields[name] = (group, _flag(ds, "sample_varying"), _flag(ds, "time_varying"))
        n_traj = int(f.attrs.get("n_trajectories", 0))
        shape = (coords["x"].shape[-1], coords["y"].shape[-1])
    return WellFile(
        str(path), n_traj, int(time.size), float(np.mean(np.diff(time))), spacing, periodic, boundary, fields, shape
    )


def _read(f, meta: WellFile, name: str, traj: int) -> np.ndarray:
    """One field of one trajectory as (time?, x, y[, 2]) float32 (no time axis for a time-constant field)."""
    group, sample_varying, _ = meta.fields[name]
    data = f[group][name]
    values = data[traj] if sample_varying else data[...]
    return np.asarray(values, dtype=np.float32)


def trajectory(meta: WellFile, traj: int, fields: list[str]) -> tuple[np.ndarray, list[str]]:
    """Fields (time, channel, y, x) of trajectory ``traj`` and the channel names (vectors as ``<name>_x``, ``_y``).

    A time-constant field asked for here is repeated over the file's times."""
    unknown = [n for n in fields if n not in meta.fields]
    if unknown:
        raise InputError(meta.path, f"has no field {unknown} in t0_fields or t1_fields (has {sorted(meta.fields)})")
    if not 0 <= traj < meta.n_traj:
        raise InputError(meta.path, f"has {meta.n_traj} trajectories, asked for {traj}")
    channels, names = [], []
    with _h5(meta.path) as f:
        for name in fields:
            group, _, time_varying = meta.fields[name]
            values = _read(f, meta, name, traj)
            if not time_varying:
                values = np.broadcast_to(values, (meta.n_time, *values.shape))
            expect = (meta.n_time, *meta.shape) + ((2,) if group == "t1_fields" else ())
            if values.shape != expect:
                raise InputError(meta.path, f"field {name!r} of trajectory {traj} is {values.shape}, want {expect}")
            if group == "t1_fields":
                channels += [values[..., 0], values[..., 1]]
                names += [f"{name}_x", f"{name}_y"]
            else:
                channels.append(values)
                names.append(name)
    stacked = np.stack(channels, axis=1)  # (time, channel, x, y)
    if not np.all(np.isfinite(stacked)):
        raise InputError(meta.path, f"trajectory {traj} has non-finite values")
    return np.ascontiguousarray(np.swapaxes(stacked, -1, -2)), names


def statics(meta: WellFile, traj: int, fields: list[str]) -> np.ndarray:
    """Time-constant fields (channel, y, x) of trajectory ``traj`` (density, speed_of_sound, ...)."""
    out = []
    with _h5(meta.path) as f:
        for name in fields:
            if name not in meta.fields:
                raise InputError(meta.path, f"has no field {name!r} (has {sorted(meta.fields)})")
            group, _, time_varying = meta.fields[name]
            if time_varying or group != "t0_fields":
                raise InputError(meta.path, f"field {name!r} varies in time or is not a scalar: not a static input")
            values = _read(f, meta, name, traj)
            if values.shape != meta.shape:
                raise InputError(meta.path, f"static field {name!r} is {values.shape}, want {meta.shape}")
            out.append(values.T)
    return np.stack(out) if out else np.zeros((0, meta.shape[1], meta.shape[0]), np.float32)
