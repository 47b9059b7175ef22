"""PDEBench HDF5 files (DaRUS doi:10.18419/darus-2986), read one sample at a time.

Layouts, as the PDEBench data README and its ``pdebench/data_gen`` writers lay them out (Takamoto et al.,
NeurIPS 2022 Datasets and Benchmarks), recognised by their datasets:
- ``burgers_1d`` (also 1-D advection, diffusion-sorption, ...): ``tensor`` (sample, time, x), ``x-coordinate``
  (x,), ``t-coordinate`` (time + 1,: the time edges) e.g. ``1D_Burgers_Sols_Nu0.001.hdf5``;
- ``ns_incom_2d``: 2-D incompressible Navier-Stokes, ``velocity`` (sample, time, x, y, 2), ``particles``
  (sample, time, x, y, 1), ``force`` (sample, x, y, 2), ``t`` (sample, time), e.g. ``ns_incom_inhom_2d_512-0.h5``,
  on the unit square (the files carry no x/y coordinates);
- ``cfd_2d``: 2-D compressible Navier-Stokes, one array per field ``density``, ``pressure``, ``Vx``, ``Vy``
  (sample, time, x, y) with ``x-coordinate``, ``y-coordinate``, ``t-coordinate``, e.g. ``2D_CFD_Rand_M0.1_...hdf5``;
- ``per_seed_2d``: one group per seed ``0000/data`` (time, x, y, channel) with ``0000/grid/{x, y, t}`` (2-D
  diffusion-reaction, shallow water).
Anything else (3-D CFD with ``Vz``, the 1-D reaction-diffusion or Darcy files, ...) is refused by name.
Arrays come out (time, channel, y, x) float32 per sample (1-D: (time, channel, 1, x)) with the grid spacing from
the coordinates.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from repro.data.fields.readers import open_h5
from repro.workflow.io import InputError

LAYOUTS = ("burgers_1d", "ns_incom_2d", "cfd_2d", "per_seed_2d")
CFD_FIELDS = ("density", "pressure", "Vx", "Vy")


@dataclass
class PdeFile:
    path: str
    layout: str
    n_samples: int
    n_time: int
    channels: list[str]
    spacing: dict[str, float]
    dt: float
    groups: list[str]


def _h5(path: str | os.PathLike):
    return open_h5(path, "a PDEBench HDF5 file the config lists")


def _spacing(values, n: int) -> float:
    if values is None:
        return 1.0 / n
    c = np.asarray(values, dtype=float).reshape(-1)
    steps = np.diff(c)
    if steps.size == 0 or steps[0] <= 0 or not np.allclose(steps, steps[0], rtol=1e-3):
        raise ValueError("coordinates are not a uniform ascending grid")
    return float(steps[0])


def _dt(values) -> float:
    t = np.asarray(values, dtype=float).reshape(-1) if values is not None else np.array([0.0, 1.0])
    return float(np.mean(np.diff(t))) if t.size > 1 else 1.0


def describe(path: str | os.PathLike) -> PdeFile:
    """Which layout the file is, its sizes and grid spacing; an unknown layout is refused by name."""
    with _h5(path) as f:
        keys = set(f.keys())
        try:
            if "Vz" in keys:
                raise InputError(path, "layout 3-D CFD (Vx, Vy, Vz): this reader handles the 1-D and 2-D layouts")
            if "tensor" in keys and f["tensor"].ndim == 3:
                n, t, x = f["tensor"].shape
                coord = f["x-coordinate"][...] if "x-coordinate" in keys else None
                return PdeFile(
                    str(path),
                    "burgers_1d",
                    n,
                    t,
                    ["u"],
                    {"x": _spacing(coord, x)},
                    _dt(f["t-coordinate"][...] if "t-coordinate" in keys else None),
                    [],
                )
            if "velocity" in keys and f["velocity"].ndim == 5:
                n, t, x, y, _ = f["velocity"].shape
                dt = _dt(f["t"][0] if "t" in keys and f["t"].ndim == 2 else None)
                channels = ["velocity_x", "velocity_y"] + (["particles"] if "particles" in keys else [])
                return PdeFile(str(path), "ns_incom_2d", n, t, channels, {"x": 1.0 / x, "y": 1.0 / y}, dt, [])
            if all(k in keys for k in CFD_FIELDS):
                n, t, x, y = f["density"].shape
                spacing = {
                    "x": _spacing(f["x-coordinate"][...] if "x-coordinate" in keys else None, x),
                    "y": _spacing(f["y-coordinate"][...] if "y-coordinate" in keys else None, y),
                }
                dt = _dt(f["t-coordinate"][...] if "t-coordinate" in keys else None)
                return PdeFile(str(path), "cfd_2d", n, t, list(CFD_FIELDS), spacing, dt, [])
            groups = sorted(k for k in keys if hasattr(f[k], "keys") and "data" in f[k])
            if groups:
                data = f[groups[0]]["data"]
                if data.ndim != 4:
                    raise InputError(path, f"per-seed 'data' is {data.shape}, want (time, x, y, channel)")
                t, x, y, c = data.shape
                grid = f[groups[0]]["grid"] if "grid" in f[groups[0]] else {}
                spacing = {a: _spacing(grid[a][...] if a in grid else None, n) for a, n in (("x", x), ("y", y))}
                dt = _dt(grid["t"][...] if "t" in grid else None)
                return PdeFile(
                    str(path), "per_seed_2d", len(groups), t, [f"c{i}" for i in range(c)], spacing, dt, groups
                )
        except ValueError as err:
            raise InputError(path, str(err)) from err
        if "nu" in keys and "tensor" in keys:
            raise InputError(path, "layout 2-D Darcy flow (nu, tensor): a steady problem, not a time series; not read")
        raise InputError(path, f"unknown PDEBench layout (datasets {sorted(keys)}); readable: {LAYOUTS}")


def sample(meta: PdeFile, index: int, stride: int = 1) -> np.ndarray:
    """Sample ``index`` as (time, channel, y, x) float32 (1-D: (time, 1, 1, x)), every ``stride``-th time step."""
    if not 0 <= index < meta.n_samples:
        raise InputError(meta.path, f"has {meta.n_samples} samples, asked for {index}")
    with _h5(meta.path) as f:
        if meta.layout == "burgers_1d":
            out = f["tensor"][index, ::stride][:, None, None, :]
        elif meta.layout == "ns_incom_2d":
            parts = [f["velocity"][index, ::stride]]
            if "particles" in meta.channels:
                parts.append(f["particles"][index, ::stride])
            out = np.moveaxis(np.concatenate(parts, axis=-1), -1, 1).swapaxes(-1, -2)
        elif meta.layout == "cfd_2d":
            out = np.stack([f[k][index, ::stride] for k in CFD_FIELDS], axis=1).swapaxes(-1, -2)
        else:
            out = np.moveaxis(f[meta.groups[index]]["data"][::stride], -1, 1).swapaxes(-1, -2)
    out = np.ascontiguousarray(out, dtype=np.float32)
    if not np.all(np.isfinite(out)):
        raise InputError(meta.path, f"sample {index} has non-finite values")
    return out


def vorticity(velocity: np.ndarray, dx: float, dy: float) -> np.ndarray:
    """dv/dx - du/dy of velocity (..., 2, y, x) by second-order central differences (one-sided at the edges)."""
    u, v = velocity[..., 0, :, :], velocity[..., 1, :, :]
    return (np.gradient(v, dx, axis=-1) - np.gradient(u, dy, axis=-2)).astype(np.float32)
