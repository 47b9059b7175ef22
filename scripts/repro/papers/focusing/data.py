"""Stage: meshes -> per shape the training views of every mode, the input voxels and surface samples.

Embedded default: pybullet_data's random objects and classic models, read from the pybullet wheel's files
(package data, never installed). Full scale: a folder of OBJ meshes (Objaverse objects exported to OBJ in the
layout of the Objaverse download, ``<root>/<NNN-NNN>/<uid>.obj``; ShapeNet's ``<id>/models/model_normalized.obj``
and ``<id>/model.obj`` are read too: every ``*.obj`` below the folder, sorted by path). A mesh that cannot be
read (no faces, a face naming a missing vertex, degenerate extent) is refused, counted and named in the log
and the manifest; more than ``max_bad_fraction`` refused stops the stage.

Every mesh is centred and scaled so its largest half-side is ``extent`` (inside the latent grid's cube
[-1, 1]^3), and seen from ``views`` cameras on a sphere. Each base view is *zoomed* by changing its intrinsics
(repro.papers.focusing.geometry.zoom_intrinsics) onto the square window around the mesh's projection
(adaptive zoom: at a fixed image size the pixels concentrate on the object). Exact ray distances are rendered
per training view (repro.papers.focusing.geometry.rasterize_depth).

Output: a folder with one ``<name>.npz`` per shape and ``index.json`` (names, splits, cameras, settings):
``points`` (N, 3) surface samples, ``voxels`` (R, R, R) input occupancy (R = fine_per_cell x base_cells),
``eval_active`` (n, n, n) the cells decoded on held-out shapes (the input's occupied cells dilated by one),
``views/K`` (V, 3, 3) zoomed intrinsics; for training shapes also ``views/depth`` (V, H, W),
``views/carved`` and ``views/frustum`` (V, n, n, n) the per-view active cells of Focusing and of
frustum-only training, and the *sections* of TripoSF-like sectional training at a matched budget: each zoomed
view tiled k x k (k from ``section_splits``, the split whose mean section frustum is closest in ratio to the
view's carved count), ``sections/K``, ``sections/depth``, ``sections/frustum``, ``sections/view``.
manifest.json records each mesh (file, bytes, sha256, faces), the refused ones, and per shape the active-cell
statistics and carving's visible-surface recall. Memory holds one shape at a time.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from repro.papers.focusing import carving, geometry
from repro.workflow.io import InputError, atomic_path, sha256, write_json
from repro.workflow.progress import Progress

log = logging.getLogger(__name__)
ID_FILES = ("model", "model_normalized")  # ShapeNet-style files named by their folder


def shape_name(root: Path, path: Path) -> str:
    """A shape's id: the file stem, or for ShapeNet-style ``<id>/[models/]model*.obj`` the id folder."""
    if path.stem not in ID_FILES:
        return path.stem
    parent = path.parent.parent if path.parent.name == "models" and path.parent != root else path.parent
    return parent.name


def mesh_files(job, cfg: dict) -> dict[str, list[tuple[str, Path]]]:
    """(name, path) of the training and held-out meshes of the configured source."""
    if cfg["source"] == "folder":
        root = Path(cfg["mesh_dir"])
        if not root.is_dir():
            raise InputError(root, "mesh folder does not exist")
        files = sorted(root.rglob("*.obj"), key=lambda p: str(p.relative_to(root)))
        if len(files) < 2:
            raise InputError(root, "need at least two meshes (*.obj below the folder)")
        named = [(shape_name(root, p), p) for p in files]
        names = [n for n, _ in named]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})[:10]
            raise InputError(root, f"two meshes share an id: {dup}")
        n_test = max(1, int(round(cfg["test_fraction"] * len(files))))
        return {"train": named[:-n_test], "test": named[-n_test:]}
    root = Path(job.input.pybullet) / "pybullet_data"
    return {split: [(Path(m).stem, root / m) for m in cfg[f"{split}_meshes"]] for split in ("train", "test")}


def read_mesh(path: Path, extent: float) -> tuple[np.ndarray, np.ndarray]:
    verts, faces = geometry.read_obj(path)
    span = verts.max(axis=0) - verts.min(axis=0)
    if not np.all(np.isfinite(verts)) or np.max(span) <= 0:
        raise InputError(path, "degenerate mesh (zero or non-finite extent)")
    return geometry.normalise(verts, extent), faces


def view_sets(verts, faces, points, cams, K, cfg: dict, n: int, probes: np.ndarray) -> tuple[dict, dict]:
    """Zoomed views, their depth and active sets, and the sections, of one training shape, with statistics."""
    image, cell = cfg["image"], carving.GRID_SIZE / n
    band, margin, tol = cfg["band_cells"] * cell, cfg["margin_cells"] * cell, 0.5 * cell / cfg["fine_per_cell"]
    out = {k: [] for k in ("views/K", "views/depth", "views/carved", "views/frustum")}
    sec = {k: [] for k in ("sections/K", "sections/depth", "sections/frustum", "sections/view")}
    kept, splits = [], []
    for v, cam in enumerate(cams):
        window = geometry.silhouette_window(verts, cam, K, cfg["zoom_pad"])
        Kz = geometry.zoom_intrinsics(K, window, image)
        depth = geometry.rasterize_depth(verts, faces, cam, Kz, image)
        carved = carving.carve_view(probes, depth, cam, Kz, band, margin)
        uv, z = geometry.project_vertices(probes.reshape(-1, 3), cam, K)
        uv, z = uv.reshape(*probes.shape[:-1], 2), z.reshape(probes.shape[:-1])
        frustum = carving.window_frustum(uv, z, window)
        seen = carving.visible_points(points, depth, cam, Kz, tol)
        idx = carving.cells_of(points[seen], n)
        kept.append(float(np.mean(carved[tuple(idx.T)])) if len(idx) else 1.0)
        windows = {k: geometry.sub_windows(window, k) for k in cfg["section_splits"]}
        counts = {k: float(np.mean([carving.window_frustum(uv, z, w).sum() for w in ws])) for k, ws in windows.items()}
        k = carving.closest_split(counts, float(carved.sum()))
        splits.append(k)
        for w in windows[k]:
            Ks = geometry.zoom_intrinsics(K, w, image)
            sec["sections/K"].append(Ks)
            sec["sections/depth"].append(geometry.rasterize_depth(verts, faces, cam, Ks, image))
            sec["sections/frustum"].append(carving.window_frustum(uv, z, w))
            sec["sections/view"].append(v)
        for key, value in zip(out, (Kz, depth, carved, frustum)):
            out[key].append(value)
    arrays = {k: np.stack(v) for k, v in (out | sec).items()}
    arrays["views/depth"] = arrays["views/depth"].astype(np.float32)
    arrays["sections/depth"] = arrays["sections/depth"].astype(np.float32)
    stats = {
        "carved": float(arrays["views/carved"].sum(axis=(1, 2, 3)).mean()),
        "frustum": float(arrays["views/frustum"].sum(axis=(1, 2, 3)).mean()),
        "sectional": float(arrays["sections/frustum"].sum(axis=(1, 2, 3)).mean()),
        "carved_within_frustum": bool(np.all(arrays["views/carved"] <= arrays["views/frustum"])),
        "visible_surface_kept_min": float(np.min(kept)),
        "section_splits": splits,
        "object_pixels": float(np.mean(np.isfinite(arrays["views/depth"]))),
    }
    return arrays, stats


def write_shape(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)


def main(job) -> None:
    settings = job.params.settings
    cfg = settings["shapes"] | {"fine_per_cell": settings["fine_per_cell"]}
    rng = np.random.default_rng(int(settings["data_seed"]))
    files = mesh_files(job, cfg)
    n, fine = cfg["base_cells"], settings["fine_per_cell"]
    cams = geometry.sphere_cameras(cfg["views"], cfg["camera_radius"])
    K = geometry.intrinsics(cfg["image"], cfg["fov_deg"])
    probes = carving.probes(n)
    out_dir = Path(job.output.shapes)
    out_dir.mkdir(parents=True, exist_ok=True)
    names, splits, rows, refused = [], [], [], []
    total = sum(len(v) for v in files.values())
    progress = Progress("focusing meshes", total=total, unit="meshes")
    for split, named in files.items():
        for name, path in named:
            try:
                verts, faces = read_mesh(path, cfg["extent"])
            except InputError as err:
                refused.append({"name": name, "file": str(path), "problem": err.problem})
                progress.update()
                continue
            points = geometry.sample_surface(verts, faces, cfg["surface_points"], rng)
            arrays = {
                "points": points.astype(np.float32),
                "voxels": carving.surface_cells(points, n * fine).astype(np.uint8),
                "eval_active": carving.dilate(carving.surface_cells(points, n)),
                "views/K": np.stack(
                    [
                        geometry.zoom_intrinsics(
                            K, geometry.silhouette_window(verts, c, K, cfg["zoom_pad"]), cfg["image"]
                        )
                        for c in cams
                    ]
                ),
            }
            stats: dict = {}
            if split == "train":
                views, stats = view_sets(verts, faces, points, cams, K, cfg, n, probes)
                arrays |= views
            write_shape(out_dir / f"{name}.npz", arrays)
            names.append(name)
            splits.append(split)
            rows.append(
                {
                    "name": name,
                    "split": split,
                    "file": str(path.name),
                    "bytes": path.stat().st_size,
                    "sha256": sha256(path),
                    "faces": int(len(faces)),
                    "active_cells": stats,
                }
            )
            progress.update()
    bad_share = len(refused) / max(total, 1)
    if refused:
        log.warning("focusing: refused %d of %d meshes: %s", len(refused), total, [r["name"] for r in refused[:10]])
    if bad_share > cfg["max_bad_fraction"]:
        raise InputError(
            cfg.get("mesh_dir") or "pybullet_data",
            f"{len(refused)} of {total} meshes refused (> max_bad_fraction {cfg['max_bad_fraction']}): "
            + "; ".join(f"{r['name']}: {r['problem']}" for r in refused[:10]),
        )
    if "train" not in splits or "test" not in splits:
        raise InputError(cfg.get("mesh_dir") or "pybullet_data", "no readable training or held-out mesh left")
    write_json(
        out_dir / "index.json",
        {"names": names, "split": splits, "cams": cams, "K": K, "settings": settings},
    )
    write_json(
        job.output.manifest,
        {
            "source": "package_data" if cfg["source"] == "embedded" else "folder",
            "generator": "repro.papers.focusing.data",
            "settings": settings,
            "shapes": rows,
            "refused": {"count": len(refused), "of": total, "first": refused[:10]},
        },
    )
