"""Stage: meshes -> exact depth / normal / mask views, surface samples, and the voxel sets of each training mode.

Embedded default: pybullet_data's random objects and classic models, read from the pybullet wheel's files
(package data, never installed). Full scale: a folder of meshes (ShapeNet / Objaverse exported to OBJ; one
``*.obj`` per shape or ``<id>/model.obj``). Every mesh is centred and scaled so its largest half-side is
``extent``, rendered with the exact ray caster (repro.papers.focusing.geometry) from cameras on a sphere.

shapes.npz holds, per shape ``<name>``: ``<name>/depth`` (V, H, W) ray distances (inf = background),
``<name>/normal`` (V, H, W, 3), ``<name>/points`` (N, 3) surface samples, and per mode (``dense``: the unit
cube at the base resolution with every cell active, the baseline; ``carved``: the same grid after depth
carving; ``focusing``: carving plus adaptive zooming) ``<name>/<mode>/box`` (lower corner x3, side),
``.../active`` (n, n, n) training cells, ``.../eval_active`` the cells the decoder fills on held-out shapes
(the input's occupied cells dilated by one, the same rule for every mode), ``.../voxels`` (f n)^3 input
occupancy; plus ``cams`` (V, 4, 4), ``K``, ``names`` and ``split``. manifest.json records the meshes
(sha256), settings, and per shape and mode the active-cell counts and carving's surface-cell recall.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.papers.focusing import carving, geometry
from repro.workflow.fields_io import save_arrays
from repro.workflow.io import InputError, sha256, write_json
from repro.workflow.progress import Progress


def mesh_files(job, cfg: dict) -> dict[str, list[Path]]:
    if cfg["source"] == "folder":
        root = Path(cfg["mesh_dir"])
        if not root.is_dir():
            raise InputError(root, "mesh folder does not exist")
        files = sorted(root.glob("*.obj")) + sorted(root.glob("*/model.obj"))
        if len(files) < 2:
            raise InputError(root, "need at least two meshes (*.obj or <id>/model.obj)")
        n_test = max(1, int(round(cfg["test_fraction"] * len(files))))
        return {"train": files[:-n_test], "test": files[-n_test:]}
    root = Path(job.input.pybullet) / "pybullet_data"
    return {split: [root / m for m in cfg[f"{split}_meshes"]] for split in ("train", "test")}


def occupancy(points: np.ndarray, lo: np.ndarray, size: float, n: int) -> np.ndarray:
    return carving.surface_cells(points, lo, size, n).astype(np.uint8)


def modes_for(points, depth, cams, K, cfg: dict, fine_per_cell: int) -> tuple[dict[str, dict[str, np.ndarray]], dict]:
    """Box, active cells, evaluation cells and input voxels of each mode, and their statistics."""
    base, fine = cfg["base_cells"], fine_per_cell
    unit_lo, unit_size = np.full(3, -1.0), 2.0

    def carve(lo, size, n):
        cell = size / n
        return carving.carve(
            depth, cams, K, lo, size, n, band=cfg["band_cells"] * cell, margin=cfg["margin_cells"] * cell
        )

    zoom_lo, zoom_size = carving.zoom_box(points, cfg["zoom_pad"])
    candidates = {n: carve(zoom_lo, zoom_size, n) for n in cfg["zoom_cells"]}
    n_zoom = carving.adaptive_resolution({n: int(a.sum()) for n, a in candidates.items()}, cfg["target_active"][1])
    setups = {
        "dense": (unit_lo, unit_size, base, np.ones((base,) * 3, bool)),
        "carved": (unit_lo, unit_size, base, carve(unit_lo, unit_size, base)),
        "focusing": (zoom_lo, zoom_size, n_zoom, candidates[n_zoom]),
    }
    out, stats = {}, {}
    for mode, (lo, size, n, active) in setups.items():
        surface = carving.surface_cells(points, lo, size, n)
        out[mode] = {
            "box": np.array([*lo, size]),
            "active": active,
            "eval_active": carving.dilate(surface),
            "voxels": occupancy(points, lo, size, n * fine),
        }
        stats[mode] = {
            "cells": int(n),
            "active": int(active.sum()),
            "surface_cells": int(surface.sum()),
            "surface_kept": float(np.sum(surface & active) / max(int(surface.sum()), 1)),
        }
    stats["focusing"]["in_target"] = bool(
        cfg["target_active"][0] <= stats["focusing"]["active"] <= cfg["target_active"][1]
    )
    return out, stats


def main(job) -> None:
    settings = job.params.settings
    cfg = settings["shapes"]
    rng = np.random.default_rng(int(settings["data_seed"]))
    files = mesh_files(job, cfg)
    cams = geometry.sphere_cameras(cfg["views"], cfg["camera_radius"])
    K = geometry.intrinsics(cfg["image"], cfg["fov_deg"])
    rays = [geometry.camera_rays(c, K, cfg["image"]) for c in cams]
    arrays: dict[str, np.ndarray] = {"cams": cams, "K": K}
    names, splits, rows = [], [], []
    progress = Progress("focusing meshes", total=sum(len(v) for v in files.values()), unit="meshes")
    for split, paths in files.items():
        for path in paths:
            name = path.stem if path.name != "model.obj" else path.parent.name
            verts, faces = geometry.read_obj(path)
            verts = geometry.normalise(verts, cfg["extent"])
            hits = [geometry.ray_cast(o, d, verts, faces) for o, d in rays]
            depth = np.stack([h[0] for h in hits]).reshape(len(cams), cfg["image"], cfg["image"])
            normal = np.stack([h[1] for h in hits]).reshape(len(cams), cfg["image"], cfg["image"], 3)
            points = geometry.sample_surface(verts, faces, cfg["surface_points"], rng)
            per_mode, stats = modes_for(points, depth, cams, K, cfg, settings["fine_per_cell"])
            arrays |= {f"{name}/depth": depth.astype(np.float32), f"{name}/normal": normal.astype(np.float32)}
            arrays[f"{name}/points"] = points.astype(np.float32)
            for mode, values in per_mode.items():
                arrays |= {f"{name}/{mode}/{k}": v for k, v in values.items()}
            names.append(name)
            splits.append(split)
            rows.append(
                {
                    "name": name,
                    "split": split,
                    "file": str(path.name),
                    "sha256": sha256(path),
                    "faces": int(len(faces)),
                    "modes": stats,
                }
            )
            progress.update()
    arrays["names"], arrays["split"] = np.array(names), np.array(splits)
    save_arrays(job.output.shapes, arrays)
    write_json(
        job.output.manifest,
        {
            "source": "package_data" if cfg["source"] == "embedded" else "folder",
            "generator": "repro.papers.focusing.data",
            "settings": settings,
            "shapes": rows,
            "files": {"shapes.npz": {"sha256": sha256(job.output.shapes)}},
        },
    )
