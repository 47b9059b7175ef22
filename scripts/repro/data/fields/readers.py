"""Readers that turn the papers' real field data into the canonical layout (repro.data.fields.store).

(The neuraloperator package members, torch tensors, are read by repro.data.fields.neuraloperator.)
(SEVIR, selected through its catalog and read per event, is repro.data.fields.sevir.)
- ``meteonet_frames``: MeteoNet reflectivity npz (array ``data`` (time, y, x) in dBZ, optional ``dates``), one
  file at a time (``meteonet_shape`` reads its size from the header);
- ``fno_mat``: the FNO release's ``.mat`` files (MATLAB v5 via scipy, v7.3 via h5py with the axes reversed
  as MATLAB stores them column-major), e.g. ``u`` (sample, y, x, time) and ``a`` (sample, y, x);
(PDEBench and The Well, read one sample or trajectory at a time, are repro.data.fields.pdebench and
repro.data.fields.the_well.)
Each raises :class:`repro.workflow.io.InputError` naming the file and what is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError


def open_h5(path: str | os.PathLike, what: str | None = None):
    """An HDF5 file opened for reading; a missing file (``what`` says which one the config needs) or one that is not
    HDF5 is an InputError naming it."""
    import h5py

    if what is not None and not Path(path).is_file():
        raise InputError(path, f"missing ({what})")
    try:
        return h5py.File(path, "r")
    except (OSError, FileNotFoundError) as err:
        raise InputError(path, f"cannot open as HDF5 ({err})") from err


_h5 = open_h5


def _npz_shape(path: str | os.PathLike, member: str) -> tuple[int, ...]:
    """Shape of one array of an npz file, read from its header without loading the data."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z, z.open(f"{member}.npy") as fh:
            major, _ = np.lib.format.read_magic(fh)
            read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            shape, _, _ = read_header(fh)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as err:
        raise InputError(path, f"cannot read array {member!r} of the npz file ({err})") from err
    return tuple(shape)


def meteonet_shape(path: str | os.PathLike) -> tuple[int, ...]:
    """(time, y, x) of a MeteoNet reflectivity npz file (its ``data`` array), without loading it."""
    shape = _npz_shape(path, "data")
    if len(shape) != 3:
        raise InputError(path, f"'data' has shape {shape}, want (time, y, x)")
    return shape


def meteonet_frames(path: str | os.PathLike, dbz_max: float) -> np.ndarray:
    """Reflectivity (time, y, x) mapped to 0-255 (dBZ clipped to [0, dbz_max]); NaN (no data) stays NaN."""
    try:
        content = np.load(path)
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot open as npz ({err})") from err
    if "data" not in content:
        raise InputError(path, f"has no 'data' array (has {sorted(content.files)})")
    dbz = content["data"].astype(np.float32)
    if dbz.ndim != 3:
        raise InputError(path, f"'data' has shape {dbz.shape}, want (time, y, x)")
    return 255.0 * np.clip(dbz, 0.0, dbz_max) / dbz_max


def fno_mat(path: str | os.PathLike, variables: list[str], samples: list[slice] | None = None) -> dict[str, np.ndarray]:
    """Arrays of an FNO-release ``.mat`` file in MATLAB's axis order (sample first).

    MATLAB v7.3 files are HDF5 stored column-major (h5py sees the axes reversed); ``samples`` then reads only
    those ranges of the sample axis (MATLAB's first, HDF5's last), so a 5,000-sample file is never loaded whole.
    v5 files (scipy.io) are read whole and sliced.
    """
    import h5py
    from scipy import io

    if not Path(path).is_file():
        raise InputError(path, "missing (an FNO-release .mat file the config names)")
    if h5py.is_hdf5(path):
        with _h5(path) as f:
            arrays = {}
            for k in variables:
                if k not in f:
                    continue
                data = f[k]
                parts = [data[..., s] for s in samples] if samples else [data[...]]
                arrays[k] = np.transpose(np.concatenate(parts, axis=-1))
    else:
        try:
            content = io.loadmat(path, variable_names=variables)
        except (OSError, ValueError, NotImplementedError) as err:
            raise InputError(path, f"cannot read as a .mat file ({err})") from err
        arrays = {k: content[k] for k in variables if k in content}
        if samples:
            arrays = {k: np.concatenate([v[s] for s in samples]) for k, v in arrays.items()}
    missing = [k for k in variables if k not in arrays]
    if missing:
        raise InputError(path, f"lacks variables {missing}")
    return {k: np.asarray(v, dtype=np.float32) for k, v in arrays.items()}


def fno_samples(path: str | os.PathLike) -> int:
    """Number of samples of an FNO NS file (``a``'s first MATLAB axis), read from the header where possible."""
    import h5py

    if not Path(path).is_file():
        raise InputError(path, "missing (an FNO-release .mat file the config names)")
    if h5py.is_hdf5(path):
        with _h5(path) as f:
            if "a" not in f:
                raise InputError(path, f"lacks variables ['a'] (has {sorted(f)})")
            return int(f["a"].shape[-1])
    return int(fno_mat(path, ["a"])["a"].shape[0])


def fno_navier_stokes(path: str | os.PathLike, samples: list[slice] | None = None) -> np.ndarray:
    """Vorticity (sample, time, y, x) of an FNO NS file: ``a`` (t = 0) followed by ``u``'s frames."""
    arrays = fno_mat(path, ["a", "u"], samples)
    u = arrays["u"]
    if u.ndim != 4 or arrays["a"].shape != u.shape[:3]:
        raise InputError(path, f"'u' {u.shape} and 'a' {arrays['a'].shape} are not (N, y, x, T) and (N, y, x)")
    return np.concatenate([arrays["a"][:, None], np.moveaxis(u, -1, 1)], axis=1)
