"""The training modes' choice of a step's views and active cells, and the shapes folder reader (numpy only).

Modes: ``focusing`` (per-view carved cells of the zoomed view), ``frustum`` (every cell of the view's frustum),
``sectional`` (a k x k section of the view, every cell of the section's frustum: TripoSF-like sectional
training at a matched budget) and ``random`` (as many cells as Focusing carves, drawn from the frustum).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.workflow.io import InputError, read_json

MODES = ("focusing", "frustum", "sectional", "random")


class Shapes:
    """The shapes folder of the data stage, one npz per shape read on first use and kept in a cache of at most
    ``cache_bytes`` (oldest first out), so memory stays flat in the number of shapes."""

    def __init__(self, folder: str | Path, cache_bytes: int = 2**30):
        self.folder = Path(folder)
        index = read_json(self.folder / "index.json")
        for key in ("names", "split", "cams", "K"):
            if key not in index:
                raise InputError(self.folder / "index.json", f"missing {key!r}")
        self.names, self.split = list(index["names"]), list(index["split"])
        self.cams, self.K = np.asarray(index["cams"]), np.asarray(index["K"])
        self._cache: dict[str, dict[str, np.ndarray]] = {}
        self._limit = cache_bytes

    def cached_bytes(self) -> int:
        return sum(a.nbytes for arrays in self._cache.values() for a in arrays.values())

    def of(self, split: str) -> list[str]:
        return [n for n, s in zip(self.names, self.split) if s == split]

    def __getitem__(self, name: str) -> dict[str, np.ndarray]:
        if name not in self._cache:
            path = self.folder / f"{name}.npz"
            try:
                with np.load(path) as content:
                    arrays = {k: content[k] for k in content.files}
            except (OSError, ValueError) as err:
                raise InputError(path, f"cannot read the shape ({err})") from err
            size = sum(a.nbytes for a in arrays.values())
            while self._cache and self.cached_bytes() + size > self._limit:
                self._cache.pop(next(iter(self._cache)))
            self._cache[name] = arrays
        return self._cache[name]


def draw_step(shape: dict, cams: np.ndarray, mode: str, rng: np.random.Generator, per_step: int):
    """The views of one step and its active cells: (cam2world (B, 4, 4), K (B, 3, 3), depth (B, H, W), active).

    The view choice uses the same draws for every mode; sectional then draws a section of each chosen view."""
    V = len(shape["views/K"])
    views = np.sort(rng.choice(V, size=min(per_step, V), replace=False))
    pick = rng.random(len(views))  # section choice and the random subset's seed, drawn in every mode so that
    subset = int(rng.integers(2**31))  # the later draws stay aligned across modes
    if mode == "sectional":
        owner = shape["sections/view"]
        sections = [np.flatnonzero(owner == v)[int(p * np.sum(owner == v))] for v, p in zip(views, pick)]
        active = np.any(shape["sections/frustum"][sections], axis=0)
        return cams[owner[sections]], shape["sections/K"][sections], shape["sections/depth"][sections], active
    carved = np.any(shape["views/carved"][views], axis=0)
    frustum = np.any(shape["views/frustum"][views], axis=0)
    if mode == "focusing":
        active = carved
    elif mode == "frustum":
        active = frustum
    elif mode == "random":
        pool = np.flatnonzero(frustum)
        active = np.zeros(frustum.size, bool)
        active[np.random.default_rng(subset).choice(pool, size=int(carved.sum()), replace=False)] = True
        active = active.reshape(frustum.shape)
    else:
        raise ValueError(f"unknown mode {mode!r}")
    return cams[views], shape["views/K"][views], shape["views/depth"][views], active
