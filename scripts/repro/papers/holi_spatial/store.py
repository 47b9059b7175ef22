"""The canonical scene format: one ``.npz`` per scene (frames, cameras, ground-truth boxes) in a folder.

Arrays: ``rgb`` (F, H, W, 3) uint8, ``depth`` (F, H, W) float32 metres, ``instance`` (F, H, W) int32 object id or
-1, ``cam2world`` (F, 4, 4) OpenCV axes, ``K`` (3, 3), ``obj_id`` (N,), ``obj_class`` (N,) str, ``box_lo`` and
``box_hi`` (N, 3) world axis-aligned boxes, ``table_top`` (scalar; NaN when the scene has no table). The simulator
and the ScanNet reader both write it; the curation stage reads only this.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError, atomic_path

# Object classes of the simulated scenes (the table plus scene.ASSETS), the label set of the mask stand-in.
CLASSES = ("table", "tray", "duck", "teddy", "mug", "lego", "jenga", "cube", "sphere", "ball")


@dataclass
class Scene:
    """One rendered scene: frames, cameras and ground-truth objects (ids are the segmentation ids)."""

    rgb: np.ndarray  # (F, H, W, 3) uint8
    depth: np.ndarray  # (F, H, W) float32, metres along the optical axis
    instance: np.ndarray  # (F, H, W) int32, object id or -1 (floor, sky)
    cam2world: np.ndarray  # (F, 4, 4), OpenCV camera axes (x right, y down, z forward)
    K: np.ndarray  # (3, 3)
    obj_id: np.ndarray  # (N,)
    obj_class: list[str]
    box_lo: np.ndarray  # (N, 3)
    box_hi: np.ndarray  # (N, 3)
    table_top: float


KEYS = ("rgb", "depth", "instance", "cam2world", "K", "obj_id", "obj_class", "box_lo", "box_hi", "table_top")


def write_scene(path: str | Path, scene: Scene) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, **{k: np.asarray(getattr(scene, k)) for k in KEYS})


def read_scene(path: str | Path) -> Scene:
    """One scene file; a missing array or inconsistent shapes raise an InputError naming the file."""
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in KEYS if k in z}
    except (OSError, ValueError) as err:
        raise InputError(path, f"not a readable scene file ({err})") from err
    missing = [k for k in KEYS if k not in data]
    if missing:
        raise InputError(path, f"missing arrays {missing}")
    f = data["depth"].shape[0]
    if data["rgb"].shape[:3] != data["depth"].shape or data["instance"].shape != data["depth"].shape:
        raise InputError(path, "rgb, depth and instance differ in frame count or size")
    if data["cam2world"].shape != (f, 4, 4) or data["K"].shape != (3, 3):
        raise InputError(path, "expected cam2world (F, 4, 4) and K (3, 3)")
    n = len(data["obj_id"])
    if data["box_lo"].shape != (n, 3) or data["box_hi"].shape != (n, 3) or len(data["obj_class"]) != n:
        raise InputError(path, "object arrays differ in length")
    return Scene(
        rgb=data["rgb"],
        depth=data["depth"].astype(np.float32),
        instance=data["instance"].astype(np.int32),
        cam2world=data["cam2world"],
        K=data["K"],
        obj_id=data["obj_id"],
        obj_class=[str(c) for c in data["obj_class"]],
        box_lo=data["box_lo"],
        box_hi=data["box_hi"],
        table_top=float(data["table_top"]),
    )


def scene_classes(path: str | Path) -> list[str]:
    """The object classes of one scene file, read without loading its frames."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return [str(c) for c in z["obj_class"]]
    except (OSError, ValueError, KeyError) as err:
        raise InputError(path, f"not a readable scene file with obj_class ({err})") from err


def scene_files(folder: str | Path) -> list[Path]:
    files = sorted(Path(folder).glob("scene_*.npz"))
    if not files:
        raise InputError(folder, "no scene_*.npz files")
    return files
