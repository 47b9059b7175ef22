"""Readers that turn the papers' real field data into the canonical layout (repro.data.fields.store).

(The neuraloperator package members, torch tensors, are read by repro.data.fields.neuraloperator.)
- ``sevir_vil``: SEVIR VIL HDF5 (datasets ``vil`` (event, 384, 384, frame) uint8 and ``id``);
- ``meteonet_npz``: MeteoNet reflectivity npz (array ``data`` (time, y, x) in dBZ, optional ``dates``);
- ``fno_mat``: the FNO release's ``.mat`` files (MATLAB v5 via scipy, v7.3 via h5py with the axes reversed
  as MATLAB stores them column-major), e.g. ``u`` (sample, y, x, time) and ``a`` (sample, y, x);
- ``pdebench_hdf5``: PDEBench 2-D HDF5, either one group per seed with ``data`` (time, x, y, channel) or
  one array per field (sample, time, x, y);
- ``the_well_hdf5``: The Well HDF5 (``t0_fields/<name>`` (traj, time, x, y), ``t1_fields/<name>``
  (traj, time, x, y, 2), ``dimensions/time``; attrs ``n_spatial_dims``).
Each raises :class:`repro.workflow.io.InputError` naming the file and what is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError

SEVIR_FRAMES = 49


def _h5(path: str | os.PathLike):
    import h5py

    try:
        return h5py.File(path, "r")
    except (OSError, FileNotFoundError) as err:
        raise InputError(path, f"cannot open as HDF5 ({err})") from err


def block_mean(frames: np.ndarray, factor: int) -> np.ndarray:
    """Downsample the two trailing axes by averaging factor x factor blocks."""
    if factor == 1:
        return frames
    *lead, h, w = frames.shape
    if h % factor or w % factor:
        raise ValueError(f"grid {h}x{w} is not divisible by {factor}")
    return frames.reshape(*lead, h // factor, factor, w // factor, factor).mean(axis=(-1, -3))


def windows(events: np.ndarray, length: int, stride: int) -> np.ndarray:
    """Sequences of ``length`` frames every ``stride`` frames from events (event, time, y, x)."""
    starts = range(0, events.shape[1] - length + 1, stride)
    return np.stack([events[:, s : s + length] for s in starts], axis=1).reshape(-1, length, *events.shape[2:])


def sevir_vil(path: str | os.PathLike, *, length: int, stride: int, downsample: int) -> np.ndarray:
    """VIL sequences (sample, time, y, x) on the 0-255 scale from one SEVIR HDF5 file."""
    with _h5(path) as f:
        if "vil" not in f:
            raise InputError(path, f"has no 'vil' dataset (has {sorted(f)})")
        vil = f["vil"]
        if vil.ndim != 4 or vil.shape[-1] != SEVIR_FRAMES:
            raise InputError(path, f"'vil' has shape {vil.shape}, want (event, y, x, {SEVIR_FRAMES})")
        events = np.moveaxis(vil[...].astype(np.float32), -1, 1)
    return windows(block_mean(events, downsample), length, stride)


def meteonet_npz(path: str | os.PathLike, *, length: int, stride: int, dbz_max: float) -> np.ndarray:
    """Reflectivity sequences mapped to 0-255 (dBZ clipped to [0, dbz_max]) from one MeteoNet npz file."""
    try:
        content = np.load(path)
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot open as npz ({err})") from err
    if "data" not in content:
        raise InputError(path, f"has no 'data' array (has {sorted(content.files)})")
    dbz = content["data"].astype(np.float32)
    if dbz.ndim != 3:
        raise InputError(path, f"'data' has shape {dbz.shape}, want (time, y, x)")
    pixels = 255.0 * np.clip(np.nan_to_num(dbz, nan=0.0), 0.0, dbz_max) / dbz_max
    return windows(pixels[None], length, stride)


def fno_mat(path: str | os.PathLike, variables: list[str]) -> dict[str, np.ndarray]:
    """Arrays of an FNO-release ``.mat`` file in MATLAB's axis order (sample first)."""
    import h5py
    from scipy import io

    if not Path(path).is_file():
        raise InputError(path, "missing")
    if h5py.is_hdf5(path):  # MATLAB v7.3 files are HDF5, stored column-major
        with _h5(path) as f:
            arrays = {k: np.transpose(f[k][...]) for k in variables if k in f}
    else:
        try:
            content = io.loadmat(path, variable_names=variables)
        except (OSError, ValueError, NotImplementedError) as err:
            raise InputError(path, f"cannot read as a .mat file ({err})") from err
        arrays = {k: content[k] for k in variables if k in content}
    missing = [k for k in variables if k not in arrays]
    if missing:
        raise InputError(path, f"lacks variables {missing}")
    return {k: np.asarray(v, dtype=np.float32) for k, v in arrays.items()}


def fno_navier_stokes(path: str | os.PathLike) -> np.ndarray:
    """Vorticity (sample, time, y, x) of an FNO NS file: ``a`` (t = 0) followed by ``u``'s frames."""
    arrays = fno_mat(path, ["a", "u"])
    u = arrays["u"]
    if u.ndim != 4 or arrays["a"].shape != u.shape[:3]:
        raise InputError(path, f"'u' {u.shape} and 'a' {arrays['a'].shape} are not (N, y, x, T) and (N, y, x)")
    return np.concatenate([arrays["a"][:, None], np.moveaxis(u, -1, 1)], axis=1)


def pdebench_hdf5(path: str | os.PathLike, fields: list[str]) -> np.ndarray:
    """Fields (sample, time, channel, y, x) of a PDEBench 2-D file, either layout (see module docs)."""
    with _h5(path) as f:
        if fields and all(name in f for name in fields):
            stacked = np.stack([f[name][...] for name in fields], axis=2)
            if stacked.ndim != 5:
                raise InputError(path, f"fields {fields} are not (sample, time, x, y), got {stacked.shape}")
            return np.swapaxes(stacked, -1, -2).astype(np.float32)
        groups = sorted(k for k in f if hasattr(f[k], "keys") and "data" in f[k])
        if not groups:
            raise InputError(path, f"neither fields {fields} nor per-seed groups with 'data' (has {sorted(f)})")
        data = np.stack([f[g]["data"][...] for g in groups])
    if data.ndim != 5:
        raise InputError(path, f"per-seed 'data' is not (time, x, y, channel), got {data.shape[1:]}")
    return np.moveaxis(np.swapaxes(data, 2, 3), -1, 2).astype(np.float32)


def the_well_hdf5(path: str | os.PathLike, fields: list[str]) -> tuple[np.ndarray, list[str], float]:
    """Fields (traj, time, channel, y, x), channel names and dt of one The Well HDF5 file (2-D data)."""
    with _h5(path) as f:
        dims = int(f.attrs.get("n_spatial_dims", 0))
        if dims != 2:
            raise InputError(path, f"n_spatial_dims is {dims}; this reader handles 2-D data sets")
        if "dimensions" not in f or "time" not in f["dimensions"]:
            raise InputError(path, "has no dimensions/time")
        time = f["dimensions"]["time"][...]
        channels, names = [], []
        for name in fields:
            if "t0_fields" in f and name in f["t0_fields"]:
                channels.append(f["t0_fields"][name][...])
                names.append(name)
            elif "t1_fields" in f and name in f["t1_fields"]:
                vector = f["t1_fields"][name][...]
                channels += [vector[..., 0], vector[..., 1]]
                names += [f"{name}_x", f"{name}_y"]
            else:
                raise InputError(path, f"has no field {name!r} in t0_fields or t1_fields")
    stacked = np.stack(channels, axis=2)
    if stacked.ndim != 5:
        raise InputError(path, f"fields are not (traj, time, x, y), got {stacked.shape}")
    dt = float(np.mean(np.diff(time))) if time.size > 1 else 1.0
    return np.swapaxes(stacked, -1, -2).astype(np.float32), names, dt
