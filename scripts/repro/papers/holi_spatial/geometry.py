"""Camera geometry, multi-view TSDF fusion and the depth F1 metric.

The paper optimises a 3D Gaussian-splatting model per scene (PGSR, 30k iterations) initialised from
feed-forward depth and renders depth from it. The small-scale stand-in keeps the part of that step the
lifting depends on: many noisy per-frame depth maps made multi-view consistent. Noisy depths are fused
into a truncated signed-distance volume with the known poses, and each frame's depth is re-rendered from
the fused surface (z-buffered splats of the zero-crossing voxels); pixels the surface does not cover keep
the frame's own depth after a robust affine alignment to the fused rendering.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree


def transform(points: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Rigid transform of (n, 3) points by a 4x4 matrix, written out per axis: a BLAS matmul with a 3-wide
    inner dimension is many times slower on a shared, oversubscribed CPU."""
    x, y, z = points[:, 0:1], points[:, 1:2], points[:, 2:3]
    return x * m[:3, 0] + y * m[:3, 1] + z * m[:3, 2] + m[:3, 3]


def backproject(depth: np.ndarray, K: np.ndarray, cam2world: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """World points (n, 3) of the pixels in ``mask`` (all finite positive depths by default)."""
    h, w = depth.shape
    v, u = np.mgrid[0:h, 0:w]
    keep = np.isfinite(depth) & (depth > 0)
    if mask is not None:
        keep &= mask
    z = depth[keep]
    x = (u[keep] + 0.5 - K[0, 2]) / K[0, 0] * z
    y = (v[keep] + 0.5 - K[1, 2]) / K[1, 1] * z
    return transform(np.stack([x, y, z], axis=1), cam2world)


def project(points: np.ndarray, K: np.ndarray, cam2world: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixel column, row (floats, pixel centres at +0.5) and depth of world points in one camera."""
    cam = transform(points, np.linalg.inv(cam2world))
    z = cam[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = K[0, 0] * cam[:, 0] / z + K[0, 2]
        v = K[1, 1] * cam[:, 1] / z + K[1, 2]
    return u, v, z


def tsdf_fuse(
    depths: np.ndarray, K: np.ndarray, poses: np.ndarray, lo: np.ndarray, hi: np.ndarray, voxel: float, trunc: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted-average truncated signed distance on a regular grid over [lo, hi]; returns tsdf, weight and
    the voxel centres (all on the grid's shape)."""
    axes = [np.arange(a + voxel / 2, b, voxel) for a, b in zip(lo, hi, strict=True)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
    centres = grid.reshape(-1, 3)
    tsdf = np.zeros(len(centres))
    weight = np.zeros(len(centres))
    h, w = depths.shape[1:]
    for depth, pose in zip(depths, poses, strict=True):
        u, v, z = project(centres, K, pose)
        ok = (z > 0) & (u >= 0) & (u < w) & (v >= 0) & (v < h)
        ui, vi = u[ok].astype(int), v[ok].astype(int)
        sdf = depth[vi, ui] - z[ok]
        use = sdf > -trunc
        idx = np.flatnonzero(ok)[use]
        d = np.minimum(sdf[use], trunc) / trunc
        tsdf[idx] = (tsdf[idx] * weight[idx] + d) / (weight[idx] + 1)
        weight[idx] += 1
    return tsdf.reshape(grid.shape[:3]), weight.reshape(grid.shape[:3]), grid


def surface_points(tsdf: np.ndarray, weight: np.ndarray, grid: np.ndarray, min_weight: float) -> np.ndarray:
    """Zero crossings of the TSDF along the three grid axes, linearly interpolated between voxel centres."""
    out = []
    for axis in range(3):
        a = [slice(None)] * 3
        b = [slice(None)] * 3
        a[axis], b[axis] = slice(0, -1), slice(1, None)
        t0, t1 = tsdf[tuple(a)], tsdf[tuple(b)]
        ok = (np.sign(t0) != np.sign(t1)) & (weight[tuple(a)] >= min_weight) & (weight[tuple(b)] >= min_weight)
        ok &= np.abs(t0 - t1) < 1.5  # a real crossing, not the jump from the truncated front to the unseen back
        frac = t0[ok] / (t0[ok] - t1[ok])
        out.append(grid[tuple(a)][ok] + frac[:, None] * (grid[tuple(b)][ok] - grid[tuple(a)][ok]))
    return np.concatenate(out)


def splat_depth(points: np.ndarray, K: np.ndarray, pose: np.ndarray, shape: tuple[int, int], radius: int) -> np.ndarray:
    """Z-buffered depth of world points splatted as (2r+1)^2-pixel squares; NaN where nothing lands."""
    h, w = shape
    u, v, z = project(points, K, pose)
    ok = z > 0
    u, v, z = u[ok].astype(int), v[ok].astype(int), z[ok]
    buf = np.full(h * w, np.inf)
    for du in range(-radius, radius + 1):
        for dv in range(-radius, radius + 1):
            uu, vv = u + du, v + dv
            inside = (uu >= 0) & (uu < w) & (vv >= 0) & (vv < h)
            np.minimum.at(buf, vv[inside] * w + uu[inside], z[inside])
    buf[~np.isfinite(buf)] = np.nan
    return buf.reshape(h, w)


def affine_align(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``source`` mapped by the scale and shift that best fit it to ``target`` (least squares after a 2-sigma
    outlier cut, on the pixels where both are finite); unchanged when fewer than 50 pixels overlap."""
    ok = np.isfinite(source) & np.isfinite(target)
    if ok.sum() < 50:
        return source
    x, y = source[ok], target[ok]
    for _ in range(2):
        a, b = np.polyfit(x, y, 1)
        r = y - (a * x + b)
        keep = np.abs(r) < 2 * np.std(r) + 1e-6
        x, y = x[keep], y[keep]
    return a * source + b


def fuse_depths(depths: np.ndarray, K: np.ndarray, poses: np.ndarray, cfg: dict) -> np.ndarray:
    """Multi-view consistent depth per frame (see the module docstring)."""
    tsdf, weight, grid = tsdf_fuse(
        depths, K, poses, np.array(cfg["lo"]), np.array(cfg["hi"]), cfg["voxel"], cfg["trunc"]
    )
    surface = surface_points(tsdf, weight, grid, cfg["min_weight"])
    out = np.empty_like(depths)
    for f, (depth, pose) in enumerate(zip(depths, poses, strict=True)):
        fused = splat_depth(surface, K, pose, depth.shape, cfg["splat_radius"])
        fused[np.abs(fused - depth) > cfg["max_correction"]] = np.nan
        out[f] = affine_align(depth, fused)
    return out


def depth_f1(pred_points: np.ndarray, gt_points: np.ndarray, gt_scene: cKDTree, tau: float) -> dict[str, float]:
    """Depth F1 at threshold tau: precision = share of predicted points within tau of the ground-truth scene
    geometry, recall = share of the frame's ground-truth points within tau of the prediction."""
    if len(pred_points) == 0 or len(gt_points) == 0:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    precision = float(np.mean(gt_scene.query(pred_points, distance_upper_bound=tau)[0] <= tau))
    recall = float(np.mean(cKDTree(pred_points).query(gt_points, distance_upper_bound=tau)[0] <= tau))
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": precision, "recall": recall, "f1": float(f1)}
