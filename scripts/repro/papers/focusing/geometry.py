"""Meshes, cameras, zoomed intrinsics and exact CPU depth renderers (numpy) for the training views.

Why our own renderers: the views must be exact (ray distance to the first triangle hit at each pixel centre),
not a z-buffer's quantised depth, so that carving with ground-truth depth can be checked to keep every visible
surface voxel. Two implementations of the same quantity: :func:`rasterize_depth` (per triangle, the pixel
centres inside its projection, then the exact ray-plane distance: cost ~ covered pixels, what the data stage
uses) and :func:`ray_cast` (Moller-Trumbore, rays x triangles: the slow reference the tests compare with).

A zoomed view is the same camera with new intrinsics (:func:`zoom_intrinsics`): a square window of the base
image, given in base pixels, is mapped onto the full image at the same resolution, so pixels concentrate on
what the window holds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.workflow.io import InputError


def read_obj(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (V, 3) and triangles (F, 3) of a Wavefront OBJ; polygons are fan-triangulated."""
    verts, faces = [], []
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError as err:
        raise InputError(path, f"cannot read the mesh ({err})") from err
    for number, line in enumerate(lines, start=1):
        parts = line.split()
        if not parts:
            continue
        try:
            if parts[0] == "v" and len(parts) >= 4:
                verts.append([float(x) for x in parts[1:4]])
            elif parts[0] == "f" and len(parts) >= 4:
                idx = [int(p.split("/")[0]) for p in parts[1:]]
                idx = [i - 1 if i > 0 else len(verts) + i for i in idx]
                faces += [[idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1)]
        except ValueError as err:
            raise InputError(path, f"line {number}: not a number in {line.strip()[:60]!r}") from err
    if not verts or not faces:
        raise InputError(path, "no vertices or faces")
    v, f = np.asarray(verts, np.float64), np.asarray(faces, np.int64)
    if f.max() >= len(v) or f.min() < 0:
        raise InputError(path, "a face refers to a missing vertex")
    return v, f


def normalise(verts: np.ndarray, extent: float) -> np.ndarray:
    """Centre the bounding box at the origin and scale its largest half-side to ``extent``."""
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    return (verts - (lo + hi) / 2) * (extent / np.max((hi - lo) / 2))


def look_at(origin: np.ndarray) -> np.ndarray:
    """cam2world (4, 4) of a camera at ``origin`` looking at the origin (camera z forward, OpenCV axes)."""
    forward = -origin / np.linalg.norm(origin)
    up = np.array([0.0, 0.0, 1.0]) if abs(forward[2]) < 0.95 else np.array([0.0, 1.0, 0.0])
    right = np.cross(forward, up)
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    out = np.eye(4)
    out[:3, 0], out[:3, 1], out[:3, 2], out[:3, 3] = right, down, forward, origin
    return out


def sphere_cameras(views: int, radius: float) -> np.ndarray:
    """(views, 4, 4) cameras on a Fibonacci sphere, all looking at the origin."""
    i = np.arange(views) + 0.5
    z = 1 - 2 * i / views
    phi = np.pi * (1 + 5**0.5) * i
    r = np.sqrt(1 - z**2)
    return np.stack(
        [look_at(radius * np.array([r[k] * np.cos(phi[k]), r[k] * np.sin(phi[k]), z[k]])) for k in range(views)]
    )


def intrinsics(size: int, fov_deg: float) -> np.ndarray:
    f = 0.5 * size / np.tan(np.deg2rad(fov_deg) / 2)
    return np.array([[f, 0, size / 2], [0, f, size / 2], [0, 0, 1.0]])


def zoom_intrinsics(K: np.ndarray, window: np.ndarray, size: int) -> np.ndarray:
    """Intrinsics of the view that maps the square window (left, top, side) of base pixels onto ``size`` pixels."""
    left, top, side = (float(x) for x in window)
    scale = size / side
    out = K.astype(np.float64).copy()
    out[0, 0], out[1, 1] = K[0, 0] * scale, K[1, 1] * scale
    out[0, 2], out[1, 2] = (K[0, 2] - left) * scale, (K[1, 2] - top) * scale
    return out


def project_vertices(verts: np.ndarray, cam2world: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Continuous pixel coordinates (V, 2) as (column, row) and camera depth z (V,) of world points."""
    cam = (verts - cam2world[:3, 3]) @ cam2world[:3, :3]
    z = cam[:, 2]
    return np.stack([K[0, 0] * cam[:, 0] / z + K[0, 2], K[1, 1] * cam[:, 1] / z + K[1, 2]], axis=1), z


def silhouette_window(verts: np.ndarray, cam2world: np.ndarray, K: np.ndarray, pad: float) -> np.ndarray:
    """Adaptive zoom: the square window (left, top, side) of base pixels around the projected mesh, its side the
    larger extent of the projection times (1 + 2 pad); every vertex, hence the whole silhouette, lies inside."""
    uv, z = project_vertices(verts, cam2world, K)
    if np.any(z <= 0):
        raise ValueError("the mesh reaches behind the camera")
    lo, hi = uv.min(axis=0), uv.max(axis=0)
    side = float(np.max(hi - lo)) * (1 + 2 * pad)
    centre = (lo + hi) / 2
    return np.array([centre[0] - side / 2, centre[1] - side / 2, side])


def sub_windows(window: np.ndarray, k: int) -> np.ndarray:
    """The k x k tiling (k^2, 3) of a square window into square sections, row by row."""
    left, top, side = window
    step = side / k
    return np.array([[left + j * step, top + i * step, step] for i in range(k) for j in range(k)])


def rasterize_depth(verts: np.ndarray, faces: np.ndarray, cam2world: np.ndarray, K: np.ndarray, size: int):
    """Ray distance (size, size) from the camera centre to the first triangle through each pixel centre (inf
    where none): per triangle the pixel centres inside its projected bounding box are tested against its
    projected edges (a straight line through the centre of projection maps to a straight line, so a centre lies
    inside the projection exactly when its ray crosses the triangle), then the ray-plane distance is exact."""
    uv, z = project_vertices(verts, cam2world, K)
    if np.any(z <= 0):
        raise ValueError("the mesh reaches behind the camera")
    tri = uv[faces]  # (F, 3, 2)
    lo = np.clip(np.ceil(tri.min(axis=1) - 0.5), 0, size).astype(np.int64)
    hi = np.clip(np.floor(tri.max(axis=1) - 0.5), -1, size - 1).astype(np.int64)
    ncol, nrow = np.maximum(hi[:, 0] - lo[:, 0] + 1, 0), np.maximum(hi[:, 1] - lo[:, 1] + 1, 0)
    counts = ncol * nrow
    depth = np.full(size * size, np.inf)
    if counts.sum() == 0:
        return depth.reshape(size, size)
    f = np.repeat(np.arange(len(faces)), counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    col = lo[f, 0] + within % ncol[f]
    row = lo[f, 1] + within // ncol[f]
    p = np.stack([col + 0.5, row + 0.5], axis=1)
    a, b, c = tri[f, 0], tri[f, 1], tri[f, 2]

    def edge(s, e):
        return (e[:, 0] - s[:, 0]) * (p[:, 1] - s[:, 1]) - (e[:, 1] - s[:, 1]) * (p[:, 0] - s[:, 0])

    w0, w1, w2 = edge(b, c), edge(c, a), edge(a, b)
    tol = 1e-9
    inside = ((w0 >= -tol) & (w1 >= -tol) & (w2 >= -tol)) | ((w0 <= tol) & (w1 <= tol) & (w2 <= tol))
    f, col, row = f[inside], col[inside], row[inside]
    pix = np.stack([(col + 0.5 - K[0, 2]) / K[0, 0], (row + 0.5 - K[1, 2]) / K[1, 1], np.ones(len(col))], axis=1)
    dirs = pix @ cam2world[:3, :3].T
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    va, vb, vc = verts[faces[f, 0]], verts[faces[f, 1]], verts[faces[f, 2]]
    normal = np.cross(vb - va, vc - va)
    denom = np.sum(normal * dirs, axis=1)
    ok = np.abs(denom) > 1e-12
    t = np.sum(normal * (va - cam2world[:3, 3]), axis=1)[ok] / denom[ok]
    keep = t > 1e-9
    np.minimum.at(depth, (row[ok][keep] * size + col[ok][keep]), t[keep])
    return depth.reshape(size, size)


def camera_rays(cam2world: np.ndarray, K: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Ray origins and unit directions (size*size, 3), pixel centres in row-major order."""
    ys, xs = np.meshgrid(np.arange(size) + 0.5, np.arange(size) + 0.5, indexing="ij")
    pix = np.stack([(xs - K[0, 2]) / K[0, 0], (ys - K[1, 2]) / K[1, 1], np.ones_like(xs)], axis=-1).reshape(-1, 3)
    dirs = pix @ cam2world[:3, :3].T
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    return np.broadcast_to(cam2world[:3, 3], dirs.shape).copy(), dirs


def _cross(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


def ray_cast(origins: np.ndarray, dirs: np.ndarray, verts: np.ndarray, faces: np.ndarray, chunk: int = 512):
    """Distance to the first hit (inf when none) and the unit face normal facing the ray, per ray
    (Moller-Trumbore, vectorised over rays x triangles, components kept separate for speed)."""
    a = verts[faces[:, 0]].T
    e1, e2 = verts[faces[:, 1]].T - a, verts[faces[:, 2]].T - a
    face_n = np.stack(_cross(e1, e2), axis=1)
    face_n /= np.maximum(np.linalg.norm(face_n, axis=1, keepdims=True), 1e-12)
    depth = np.full(len(origins), np.inf)
    normal = np.zeros((len(origins), 3))
    for s in range(0, len(origins), chunk):
        o = [origins[s : s + chunk, i, None] for i in range(3)]
        d = [dirs[s : s + chunk, i, None] for i in range(3)]
        p = _cross(d, e2)
        det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2]
        ok = np.abs(det) > 1e-12
        inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
        tv = [o[i] - a[i] for i in range(3)]
        u = (tv[0] * p[0] + tv[1] * p[1] + tv[2] * p[2]) * inv
        q = _cross(tv, e1)
        v = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) * inv
        t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * inv
        t = np.where(ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 1e-9), t, np.inf)
        first = np.argmin(t, axis=1)
        best = t[np.arange(len(t)), first]
        depth[s : s + chunk] = best
        n = face_n[first]
        n *= -np.sign(np.sum(n * dirs[s : s + chunk], axis=1, keepdims=True) + 1e-12)
        normal[s : s + chunk] = np.where(np.isfinite(best)[:, None], n, 0.0)
    return depth, normal


def sample_surface(verts: np.ndarray, faces: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` points uniformly on the surface (area-weighted triangles, uniform barycentrics)."""
    a, b, c = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)
    tri = rng.choice(len(faces), size=count, p=area / area.sum())
    r1, r2 = rng.random(count), rng.random(count)
    s = np.sqrt(r1)
    return (1 - s)[:, None] * a[tri] + (s * (1 - r2))[:, None] * b[tri] + (s * r2)[:, None] * c[tri]
