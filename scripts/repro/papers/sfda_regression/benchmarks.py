"""Paper-scale readers of the regression-shift benchmarks: dSprites and MPI3D, as their ``.npz`` releases.

- dSprites (github.com/deepmind/dsprites-dataset, README): one file
  ``dsprites_ndarray_co1sh3sc6or40x32y32_64x64.npz`` with ``imgs`` (737,280, 64, 64) uint8 in {0, 1},
  ``latents_values`` (737,280, 6) float64 and ``latents_classes`` (737,280, 6) int64, the six latents in the
  order color (1), shape (1-3: square, ellipse, heart), scale (6 values in [0.5, 1]), orientation (40 values in
  [0, 2 pi]), posX and posY (32 values each in [0, 1]), and ``metadata`` (a pickled dict, never read here). Its
  domains (the domain-adaptation-regression convention, e.g. RSD, Chen et al. 2021): ``color`` (the sprite in a
  random colour on black) and ``noisy`` (a white sprite on uniform noise); the third, ``scream`` (the sprite
  composited on a crop of Munch's painting), needs the painting and is not offered.
- MPI3D (github.com/rr-learning/disentanglement_dataset, README): one file per domain, ``mpi3d_toy.npz``,
  ``mpi3d_realistic.npz``, ``mpi3d_real.npz``, each with ``images`` (1,036,800, 64, 64, 3) uint8 in row-major
  order of the factors object_color (6), object_shape (6), object_size (2), camera_height (3), background_color
  (3), horizontal_axis (40) and vertical_axis (40): image i has the factors ``np.unravel_index(i, sizes)``.

The image arrays hold 3 GB (dSprites) and 12.7 GB per MPI3D domain: a reader streams the ``.npy`` member out of
the zip archive in chunks of rows and keeps only the seeded sample it needs, so its memory stays flat in the
file's size. Rows whose latents fall outside the documented ranges (or are not finite) are refused, counted and
the first ten named; more than ``max_bad_fraction`` of the sample refused raises InputError. A file that is not
the documented layout (member missing, dtype or shape wrong) raises InputError naming the file and the problem.
"""

from __future__ import annotations

import logging
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError

log = logging.getLogger(__name__)

DSPRITES_FILE = "dsprites_ndarray_co1sh3sc6or40x32y32_64x64.npz"
DSPRITES_LATENTS = ("color", "shape", "scale", "orientation", "posX", "posY")
# documented ranges of latents_values (closed intervals; a little slack for float round-off)
DSPRITES_RANGES = {
    "color": (1.0, 1.0),
    "shape": (1.0, 3.0),
    "scale": (0.5, 1.0),
    "orientation": (0.0, 2 * np.pi),
    "posX": (0.0, 1.0),
    "posY": (0.0, 1.0),
}
DSPRITES_DOMAINS = ("color", "noisy")
MPI3D_FACTORS = (
    "object_color",
    "object_shape",
    "object_size",
    "camera_height",
    "background_color",
    "horizontal_axis",
    "vertical_axis",
)
MPI3D_SIZES = (6, 6, 2, 3, 3, 40, 40)
MPI3D_DOMAINS = ("toy", "realistic", "real")
CHUNK_ROWS = 4096
FIRST_REFUSED = 10


@dataclass
class Refused:
    """Sampled rows a reader refused: how many of how many, and the first few (index, problem)."""

    rows: int = 0
    count: int = 0
    first: list[str] = field(default_factory=list)

    def add(self, index: int, problem: str) -> None:
        self.count += 1
        if len(self.first) < FIRST_REFUSED:
            self.first.append(f"row {index}: {problem}")

    def check(self, path: Path, max_bad_fraction: float) -> None:
        if self.count:
            log.warning("%s: refused %d of %d sampled rows; first: %s", path, self.count, self.rows, self.first)
        if self.rows and self.count / self.rows > max_bad_fraction:
            raise InputError(
                path,
                f"{self.count} of {self.rows} sampled rows refused (more than the allowed {max_bad_fraction:.1%}); "
                f"first: {'; '.join(self.first)}",
            )

    def to_dict(self) -> dict:
        return {"rows": self.rows, "refused": self.count, "first_refused": list(self.first)}


class NpzMember:
    """One ``.npy`` member of an ``.npz`` archive, read row block by row block without loading it whole."""

    def __init__(self, path: Path, name: str):
        self.path, self.name = Path(path), name
        try:
            self._zip = zipfile.ZipFile(self.path)
        except (OSError, zipfile.BadZipFile) as err:
            raise InputError(self.path, f"not a readable .npz archive ({err})") from err
        if f"{name}.npy" not in self._zip.namelist():
            raise InputError(self.path, f"has no array {name!r} (members: {sorted(self._zip.namelist())})")
        self._fh = self._zip.open(f"{name}.npy")
        try:
            version = np.lib.format.read_magic(self._fh)
            read_header = (
                np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            )
            header = read_header(self._fh)
        except ValueError as err:
            raise InputError(self.path, f"array {name!r} has no valid .npy header ({err})") from err
        self.shape, fortran, self.dtype = header
        if fortran:
            raise InputError(self.path, f"array {name!r} is stored in Fortran order; the release is C order")
        self.row_bytes = int(np.prod(self.shape[1:], dtype=np.int64)) * self.dtype.itemsize

    def rows(self, indices: np.ndarray, chunk_rows: int = CHUNK_ROWS) -> np.ndarray:
        """Rows ``indices`` (sorted, unique), streaming the member once from its start."""
        indices = np.asarray(indices, dtype=np.int64)
        if indices.size and (indices[0] < 0 or indices[-1] >= self.shape[0] or np.any(np.diff(indices) <= 0)):
            raise ValueError("indices must be sorted, unique and inside the array")
        out = np.empty((indices.size, *self.shape[1:]), dtype=self.dtype)
        done, start = 0, 0
        while done < indices.size:
            count = min(chunk_rows, self.shape[0] - start)
            block = self._fh.read(count * self.row_bytes)
            if len(block) != count * self.row_bytes:
                raise InputError(self.path, f"array {self.name!r} ends early (truncated file)")
            chunk = np.frombuffer(block, dtype=self.dtype).reshape(count, *self.shape[1:])
            stop = np.searchsorted(indices, start + count)
            out[done:stop] = chunk[indices[done:stop] - start]
            done, start = stop, start + count
        return out

    def close(self) -> None:
        self._fh.close()
        self._zip.close()


def read_small(path: Path, name: str) -> np.ndarray:
    """A small member (latents) read whole, without unpickling anything."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if name not in data.files:
                raise InputError(path, f"has no array {name!r} (members: {sorted(data.files)})")
            return data[name]
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        raise InputError(path, f"cannot read array {name!r} ({err})") from err


def draw(n_total: int, sizes: tuple[int, ...], seed: int) -> list[np.ndarray]:
    """Disjoint seeded samples of the given sizes from range(n_total), each sorted."""
    if sum(sizes) > n_total:
        raise ValueError(f"asked for {sum(sizes)} samples of {n_total}")
    picked = np.random.default_rng(seed).choice(n_total, size=sum(sizes), replace=False)
    cuts = np.cumsum(sizes)[:-1]
    return [np.sort(part) for part in np.split(picked, cuts)]


def block_mean(images: np.ndarray, size: int) -> np.ndarray:
    """(N, H, W[, C]) -> (N, size, size[, C]) by averaging square blocks (H a multiple of size)."""
    n, h = images.shape[:2]
    if h % size:
        raise ValueError(f"image side {h} is not a multiple of {size}")
    f = h // size
    shaped = images.reshape(n, size, f, size, f, *images.shape[3:]).astype(np.float32)
    return shaped.mean(axis=(2, 4))


def render_dsprites(masks: np.ndarray, domain: str, rng: np.random.Generator) -> np.ndarray:
    """(N, H, W) binary sprites -> (N, H, W, 3) float32 in [0, 1] in a dSprites domain."""
    sprite = masks.astype(np.float32)[..., None]
    if domain == "color":
        colour = rng.uniform(0.5, 1.0, size=(len(masks), 1, 1, 3)).astype(np.float32)
        return sprite * colour
    if domain == "noisy":
        noise = rng.uniform(0.0, 1.0, size=(*masks.shape, 3)).astype(np.float32)
        return np.where(sprite > 0, 1.0, noise)
    raise ValueError(f"unknown dSprites domain {domain!r}; offered: {DSPRITES_DOMAINS}")


def check_dsprites_latents(values: np.ndarray, idx: np.ndarray, refused: Refused) -> np.ndarray:
    """Mask of sampled rows whose latents are finite and inside the documented ranges."""
    rows = values[idx]
    ok = np.all(np.isfinite(rows), axis=1)
    for j, name in enumerate(DSPRITES_LATENTS):
        low, high = DSPRITES_RANGES[name]
        ok &= (rows[:, j] >= low - 1e-6) & (rows[:, j] <= high + 1e-6)
    refused.rows += idx.size
    for i in np.flatnonzero(~ok):
        refused.add(int(idx[i]), f"latents {np.round(rows[i], 4).tolist()} outside the documented ranges")
    return ok


def dsprites_split(
    path: str | Path,
    domain: str,
    factor: str,
    idx: np.ndarray,
    size: int,
    seed: int,
    refused: Refused,
) -> tuple[np.ndarray, np.ndarray]:
    """(images (n, size, size, 3) float32, factor values) of sampled rows ``idx`` rendered in ``domain``."""
    path = Path(path)
    if factor not in DSPRITES_LATENTS[2:]:
        raise ValueError(f"dSprites factor must be one of {DSPRITES_LATENTS[2:]}, got {factor!r}")
    values = read_small(path, "latents_values")
    imgs = NpzMember(path, "imgs")
    try:
        if imgs.dtype != np.uint8 or len(imgs.shape) != 3 or values.shape != (imgs.shape[0], len(DSPRITES_LATENTS)):
            raise InputError(
                path, f"imgs {imgs.dtype} {imgs.shape} and latents_values {values.shape} are not the dSprites layout"
            )
        ok = check_dsprites_latents(values, idx, refused)
        masks = imgs.rows(idx[ok])
    finally:
        imgs.close()
    if masks.size and masks.max() > 1:
        raise InputError(path, "imgs must be binary (0/1) sprites")
    rendered = render_dsprites(masks, domain, np.random.default_rng([seed, DSPRITES_DOMAINS.index(domain)]))
    return block_mean(rendered, size), values[idx[ok], DSPRITES_LATENTS.index(factor)]


def mpi3d_path(folder: str | Path, domain: str) -> Path:
    if domain not in MPI3D_DOMAINS:
        raise ValueError(f"unknown MPI3D domain {domain!r}; the release has {MPI3D_DOMAINS}")
    return Path(folder) / f"mpi3d_{domain}.npz"


def mpi3d_split(
    folder: str | Path,
    domain: str,
    factor: str,
    idx: np.ndarray,
    size: int,
    sizes: tuple[int, ...],
    refused: Refused,
) -> tuple[np.ndarray, np.ndarray]:
    """(images (n, size, size, 3) float32 in [0, 1], factor values normalised to [0, 1]) of sampled rows."""
    if factor not in MPI3D_FACTORS:
        raise ValueError(f"MPI3D factor must be one of {MPI3D_FACTORS}, got {factor!r}")
    path = mpi3d_path(folder, domain)
    images = NpzMember(path, "images")
    try:
        expected = (int(np.prod(sizes)), 64, 64, 3)
        if images.dtype != np.uint8 or tuple(images.shape) != expected:
            raise InputError(path, f"images {images.dtype} {images.shape}, expected uint8 {expected}")
        refused.rows += idx.size
        pixels = images.rows(idx)
    finally:
        images.close()
    j = MPI3D_FACTORS.index(factor)
    level = np.unravel_index(idx, sizes)[j]
    return block_mean(pixels / np.float32(255.0), size), level / max(sizes[j] - 1, 1)


def mpi3d_count(folder: str | Path, domain: str) -> int:
    member = NpzMember(mpi3d_path(folder, domain), "images")
    member.close()
    return int(member.shape[0])


def dsprites_count(path: str | Path) -> int:
    member = NpzMember(Path(path), "imgs")
    member.close()
    return int(member.shape[0])
