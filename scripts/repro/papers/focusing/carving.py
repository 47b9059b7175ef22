"""Per-view active sets of latent cells: depth-driven carving, the frustum, and their statistics (numpy).

Each training step of Focusing renders one (zoomed) view, and the decoder runs only on that view's *active*
latent cells. The grid is the unit cube [-1, 1]^3 split into n^3 cells; a cell is tested through its 27 probe
points (corners, edge and face midpoints, centre) projected into the view.

- *frustum* (TripoSF-like frustum-aware training): a cell is active when one of its probes projects inside
  the view's image;
- *carved* (Focusing, reconstructed): a cell of the frustum is active when at least one probe lies within
  ``band`` of the observed depths around its pixel (a narrow band around the surface this view sees), unless
  all its probes lie in front of the nearest observed depth by more than ``margin`` (observed free space;
  background pixels have infinite depth). Cells far behind the visible surface (occluded) and cells in free
  space are dropped, so the active set follows the visible surface of this view only.

A batch of several views uses the union of their sets (one view-consistent set for every view of the step).
With ground-truth depth, carving must keep every cell holding a surface point this view sees
(:func:`visible_points`; checked per view in the evaluate stage).
"""

from __future__ import annotations

import numpy as np

PROBES = np.stack(np.meshgrid(*[np.array([0.0, 0.5, 1.0])] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
GRID_LO, GRID_SIZE = np.full(3, -1.0), 2.0


def cell_grid(lo: np.ndarray, size: float, n: int) -> np.ndarray:
    """Lower corners (n, n, n, 3) of the cells of a cube [lo, lo + size]^3 split n ways per axis."""
    idx = np.stack(np.meshgrid(*[np.arange(n)] * 3, indexing="ij"), axis=-1)
    return lo + idx * (size / n)


def probes(n: int, lo: np.ndarray = GRID_LO, size: float = GRID_SIZE) -> np.ndarray:
    """The 27 probe points (n, n, n, 27, 3) of every cell."""
    return cell_grid(lo, size, n)[..., None, :] + PROBES * (size / n)


def project(points: np.ndarray, cam2world: np.ndarray, K: np.ndarray, image: int):
    """Pixel (row, col), in-image flag and ray distance of world points (..., 3) in one view."""
    rel = points - cam2world[:3, 3]
    cam = rel @ cam2world[:3, :3]
    z = cam[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        col = np.floor(K[0, 0] * cam[..., 0] / z + K[0, 2])
        row = np.floor(K[1, 1] * cam[..., 1] / z + K[1, 2])
    inside = (z > 0) & (col >= 0) & (col < image) & (row >= 0) & (row < image)
    row = np.clip(np.nan_to_num(row), 0, image - 1).astype(np.int64)
    col = np.clip(np.nan_to_num(col), 0, image - 1).astype(np.int64)
    return row, col, inside, np.linalg.norm(rel, axis=-1)


def depth_bounds(depth: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel, the nearest and farthest finite observed depth in a window x window neighbourhood (inf and
    -inf where the neighbourhood is all background): a probe point projects into a pixel but its own ray is
    not the pixel-centre ray, so carving compares it with the whole neighbourhood to stay conservative."""
    from scipy.ndimage import maximum_filter, minimum_filter

    near = minimum_filter(depth, size=window, mode="nearest")
    far = maximum_filter(np.where(np.isfinite(depth), depth, -np.inf), size=window, mode="nearest")
    return near, far


def frustum(points: np.ndarray, cam2world: np.ndarray, K: np.ndarray, image: int) -> np.ndarray:
    """Cells (n, n, n) with at least one probe inside the view's image."""
    return np.any(project(points, cam2world, K, image)[2], axis=-1)


def window_frustum(uv: np.ndarray, z: np.ndarray, window: np.ndarray) -> np.ndarray:
    """Cells (n, n, n) with a probe inside a square window (left, top, side) of the base image, from the
    probes' base pixel coordinates ``uv`` (..., 27, 2) and depths ``z``: the frustum of the zoomed view of that
    window, without projecting again."""
    left, top, side = window
    inside = (z > 0) & (uv[..., 0] >= left) & (uv[..., 0] < left + side) & (uv[..., 1] >= top)
    return np.any(inside & (uv[..., 1] < top + side), axis=-1)


def carve_view(
    points: np.ndarray,
    depth: np.ndarray,
    cam2world: np.ndarray,
    K: np.ndarray,
    band: float,
    margin: float,
    window: int = 3,
) -> np.ndarray:
    """Carved active cells (n, n, n) of one view from its ray-distance map ``depth`` (H, W; inf = background)."""
    row, col, inside, dist = project(points, cam2world, K, depth.shape[-1])
    nearest, farthest = depth_bounds(depth, window)
    low, high = nearest[row, col], farthest[row, col]
    free = np.all(inside & (dist < low - margin), axis=-1)
    near = np.any(inside & (dist >= low - band) & (dist <= high + band), axis=-1)
    return near & ~free


def visible_points(
    points: np.ndarray, depth: np.ndarray, cam2world: np.ndarray, K: np.ndarray, tol: float
) -> np.ndarray:
    """Mask of the surface samples (N, 3) this view sees: inside the image and within ``tol`` of the observed
    ray distance at their pixel."""
    row, col, inside, dist = project(points, cam2world, K, depth.shape[-1])
    return inside & (np.abs(dist - depth[row, col]) <= tol)


def surface_cells(points: np.ndarray, n: int, lo: np.ndarray = GRID_LO, size: float = GRID_SIZE) -> np.ndarray:
    """Cells (n, n, n) holding at least one of the points (points outside the cube are ignored)."""
    idx = np.floor((points - lo) / size * n).astype(np.int64)
    ok = np.all((idx >= 0) & (idx < n), axis=1)
    out = np.zeros((n, n, n), bool)
    out[tuple(idx[ok].T)] = True
    return out


def cells_of(points: np.ndarray, n: int, lo: np.ndarray = GRID_LO, size: float = GRID_SIZE) -> np.ndarray:
    """Cell index (N, 3) of each point, clipped into the grid."""
    return np.clip(np.floor((points - lo) / size * n).astype(np.int64), 0, n - 1)


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


def closest_split(counts: dict[int, float], budget: float) -> int:
    """The section split k whose mean active count is closest to ``budget`` in ratio (ties: the finer split)."""
    gaps = {k: abs(np.log(max(c, 1.0) / max(budget, 1.0))) for k, c in counts.items()}
    best = np.min(np.array(list(gaps.values())))
    return int(np.max(np.array([k for k, g in gaps.items() if g == best])))
