"""Meshes, cameras and an exact CPU ray caster (numpy), used to make the depth / normal / mask views.

Why our own caster: the views must be exact (ray distance to the first triangle hit), not a z-buffer's
quantised depth, so that carving with ground-truth depth can be checked to keep every surface voxel.
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
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "v" and len(parts) >= 4:
            verts.append([float(x) for x in parts[1:4]])
        elif parts[0] == "f" and len(parts) >= 4:
            idx = [int(p.split("/")[0]) for p in parts[1:]]
            idx = [i - 1 if i > 0 else len(verts) + i for i in idx]
            faces += [[idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1)]
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
