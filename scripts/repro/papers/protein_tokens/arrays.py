"""Folders of ``.npy`` arrays, read lazily (memory maps) and written one batch at a time.

Why: at paper scale the windows (about 12 kB each) and the decoded outputs (``K`` prefixes of every held-out
window) do not fit in memory, so the stages stream them: a writer creates each array at its final shape on
disk (``numpy.lib.format.open_memmap``) and fills it batch by batch; a reader maps the files and touches only
the rows it asks for. No package beyond numpy (the ``md`` env has no zarr). Keys may hold ``/``
(``ca/apt/0``); on disk it becomes ``__``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError


def _file(root: Path, key: str) -> Path:
    return root / f"{key.replace('/', '__')}.npy"


class ArrayWriter:
    """Creates arrays of known shape under ``root`` and fills them in slices."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.arrays: dict[str, np.memmap] = {}

    def create(self, key: str, shape: tuple[int, ...], dtype) -> np.memmap:
        self.arrays[key] = np.lib.format.open_memmap(_file(self.root, key), mode="w+", dtype=dtype, shape=shape)
        return self.arrays[key]

    def put(self, key: str, value: np.ndarray) -> None:
        """A whole (small) array at once."""
        self.create(key, np.shape(value), np.asarray(value).dtype)[...] = value

    def close(self) -> None:
        for array in self.arrays.values():
            array.flush()
        self.arrays.clear()


def write_arrays(root: str | os.PathLike, arrays: Mapping[str, np.ndarray]) -> None:
    writer = ArrayWriter(root)
    for key, value in arrays.items():
        writer.put(key, np.asarray(value))
    writer.close()


def open_arrays(root: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every array under ``root`` as a read-only memory map (string arrays, which cannot be mapped, loaded)."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(root, "array folder not found")
    out = {}
    for path in sorted(root.glob("*.npy")):
        array = np.load(path, mmap_mode="r", allow_pickle=False)
        out[path.stem.replace("__", "/")] = np.asarray(array) if array.dtype.kind in "US" else array
    if not out:
        raise InputError(root, "holds no .npy arrays")
    return out


def batches(n: int, size: int) -> Iterator[slice]:
    """Consecutive slices of at most ``size`` rows covering ``range(n)``."""
    for start in range(0, n, max(1, int(size))):
        yield slice(start, min(start + int(size), n))
