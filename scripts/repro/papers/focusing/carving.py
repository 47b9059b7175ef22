"""Depth-driven voxel carving of latent cells and adaptive zooming (numpy; reconstructed mechanism).

A latent cell is *carved* when some view sees through it: all of its 27 probe points (corners, edge and face
midpoints, centre) project inside that view and lie in front of the nearest observed depth around their pixel
by more than ``margin`` (observed free space; a background pixel has infinite depth). A cell is *kept* when it
is not carved and at least one probe point lies within ``band`` of the observed depths around its pixel in
some view (a narrow band around the observed surface; cells far behind every observed surface get no
rendering gradient and are dropped too).

Adaptive zooming fits the grid's cube to the shape and picks, from candidate latent resolutions, the finest
whose kept-cell count stays at or below the target's upper end (the memory cap), so that the active voxels
stay in the target range while small or thin shapes get finer voxels.
"""

from __future__ import annotations

import numpy as np

MODES = ("dense", "carved", "focusing")  # the VAE without carving (baseline), carved, carved + zoomed
PROBES = np.stack(np.meshgrid(*[np.array([0.0, 0.5, 1.0])] * 3, indexing="ij"), axis=-1).reshape(-1, 3)


def cell_grid(lo: np.ndarray, size: float, n: int) -> np.ndarray:
    """Lower corners (n, n, n, 3) of the cells of a cube [lo, lo + size]^3 split n ways per axis."""
    idx = np.stack(np.meshgrid(*[np.arange(n)] * 3, indexing="ij"), axis=-1)
    return lo + idx * (size / n)


def project(points: np.ndarray, cam2world: np.ndarray, K: np.ndarray, image: int):
    """Pixel (row, col), in-image flag and ray distance of world points (..., 3) in one view."""
    rel = points - cam2world[:3, 3]
    cam = rel @ cam2world[:3, :3]
    z = cam[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        col = np.floor(K[0, 0] * cam[..., 0] / z + K[0, 2]).astype(np.int64)
        row = np.floor(K[1, 1] * cam[..., 1] / z + K[1, 2]).astype(np.int64)
    inside = (z > 0) & (col >= 0) & (col < image) & (row >= 0) & (row < image)
    return np.clip(row, 0, image - 1), np.clip(col, 0, image - 1), inside, np.linalg.norm(rel, axis=-1)


def depth_bounds(depth: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel, the nearest and farthest finite observed depth in a window x window neighbourhood (inf and
    -inf where the neighbourhood is all background): a probe point projects into a pixel but its own ray is
    not the pixel-centre ray, so carving compares it with the whole neighbourhood to stay conservative."""
    from scipy.ndimage import maximum_filter, minimum_filter

    size = (1, window, window)
    near = minimum_filter(depth, size=size, mode="nearest")
    far = maximum_filter(np.where(np.isfinite(depth), depth, -np.inf), size=size, mode="nearest")
    return near, far


def carve(
    depth: np.ndarray,
    cams: np.ndarray,
    K: np.ndarray,
    lo: np.ndarray,
    size: float,
    n: int,
    band: float,
    margin: float,
    window: int = 3,
) -> np.ndarray:
    """Kept cells (n, n, n) of the cube from the views' ray-distance maps ``depth`` (V, H, W; inf = background)."""
    cell = size / n
    probes = cell_grid(lo, size, n)[..., None, :] + PROBES * cell
    nearest, farthest = depth_bounds(depth, window)
    carved = np.zeros((n, n, n), bool)
    near = np.zeros((n, n, n), bool)
    for view in range(len(cams)):
        row, col, inside, dist = project(probes, cams[view], K, depth.shape[-1])
        low, high = nearest[view][row, col], farthest[view][row, col]
        carved |= np.all(inside & (dist < low - margin), axis=-1)
        near |= np.any(inside & (dist >= low - band) & (dist <= high + band), axis=-1)
    return near & ~carved


def surface_cells(points: np.ndarray, lo: np.ndarray, size: float, n: int) -> np.ndarray:
    """Cells (n, n, n) holding at least one of the points (points outside the cube are ignored)."""
    idx = np.floor((points - lo) / size * n).astype(np.int64)
    ok = np.all((idx >= 0) & (idx < n), axis=1)
    out = np.zeros((n, n, n), bool)
    out[tuple(idx[ok].T)] = True
    return out


def dilate(mask: np.ndarray) -> np.ndarray:
    """Cells within one cell (26-neighbourhood) of a True cell."""
    padded = np.pad(mask, 1)
    out = np.zeros_like(mask)
    n = mask.shape
    for dx in range(3):
        for dy in range(3):
            for dz in range(3):
                out |= padded[dx : dx + n[0], dy : dy + n[1], dz : dz + n[2]]
    return out


def zoom_box(points: np.ndarray, pad: float) -> tuple[np.ndarray, float]:
    """Lower corner and side of the cube fitted around the points with ``pad`` on every side."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    side = float(np.max(hi - lo)) + 2 * pad
    return (lo + hi) / 2 - side / 2, side


def adaptive_resolution(counts: dict[int, int], high: int) -> int:
    """The finest candidate resolution whose kept-cell count is at most ``high`` (else the coarsest)."""
    fitting = [n for n, c in sorted(counts.items()) if c <= high]
    return fitting[-1] if fitting else min(counts)
