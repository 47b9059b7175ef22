"""Reader of ScanNet v2 scenes exported to frames (the layout of ScanNet's SensReader plus the 2D instance
labels and VoteNet's box files), converted to the canonical scene format.

Layout under ``root``::

    scans/<scene>/color/<i>.jpg            colour frames (any size; resized to the depth size)
    scans/<scene>/depth/<i>.png            uint16 depth in millimetres
    scans/<scene>/pose/<i>.txt             4x4 camera-to-world (OpenCV axes); rows of -inf mark lost tracking
    scans/<scene>/intrinsic/intrinsic_depth.txt   4x4 (upper-left 3x3 is K of the depth camera)
    scans/<scene>/instance-filt/<i>.png    2D instance ids (0 = none), from <scene>_2d-instance-filt.zip
    scans/<scene>/<scene>_bbox.npy         (N, 7) centre xyz, size xyz, class id (VoteNet's scannet preprocessing)

The 2D instance ids and the box rows are matched by order (VoteNet writes one row per instance id, 1-based).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.papers.holi_spatial.store import Scene
from repro.workflow.io import InputError


def _frame_ids(folder: Path) -> list[int]:
    ids = sorted(int(p.stem) for p in folder.glob("*.png") if p.stem.isdigit())
    if not ids:
        raise InputError(folder, "no numbered depth frames (<i>.png)")
    return ids


def read_matrix(path: Path, shape: tuple[int, int]) -> np.ndarray:
    if not path.is_file():
        raise InputError(path, "missing")
    try:
        m = np.loadtxt(path, ndmin=2)
    except ValueError as err:
        raise InputError(path, f"not a numeric matrix ({err})") from err
    if m.shape != shape:
        raise InputError(path, f"expected a {shape[0]}x{shape[1]} matrix, got {m.shape}")
    return m


def _image(path: Path, size: tuple[int, int] | None = None, nearest: bool = False) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    if not path.is_file():
        raise InputError(path, "missing")
    try:
        with Image.open(path) as im:
            if size is not None and im.size != size:
                im = im.resize(size, Image.NEAREST if nearest else Image.BILINEAR)
            return np.asarray(im)
    except (UnidentifiedImageError, OSError) as err:
        raise InputError(path, f"not a readable image ({err})") from err


def read_scannet_scene(root: str | Path, scene: str, stride: int, max_frames: int) -> Scene:
    """Every ``stride``-th frame with a valid pose (at most ``max_frames``) of one exported ScanNet scene."""
    base = Path(root) / "scans" / scene
    if not base.is_dir():
        raise InputError(base, "scene folder not found")
    K4 = read_matrix(base / "intrinsic" / "intrinsic_depth.txt", (4, 4))
    boxes_path = base / f"{scene}_bbox.npy"
    if not boxes_path.is_file():
        raise InputError(boxes_path, "missing (VoteNet-style boxes: centre xyz, size xyz, class id)")
    boxes = np.load(boxes_path)
    if boxes.ndim != 2 or boxes.shape[1] != 7:
        raise InputError(boxes_path, f"expected an (N, 7) array, got {boxes.shape}")
    rgb, depth, inst, poses = [], [], [], []
    for i in _frame_ids(base / "depth")[::stride]:
        pose = read_matrix(base / "pose" / f"{i}.txt", (4, 4))
        if not np.all(np.isfinite(pose)):
            continue
        d = _image(base / "depth" / f"{i}.png")
        if d.dtype != np.uint16 or d.ndim != 2:
            raise InputError(base / "depth" / f"{i}.png", f"expected 16-bit single-channel depth, got {d.dtype}")
        size = (d.shape[1], d.shape[0])
        c = _image(base / "color" / f"{i}.jpg", size)[..., :3]
        ids = _image(base / "instance-filt" / f"{i}.png", size, nearest=True).astype(np.int32)
        z = d.astype(np.float32) / 1000.0
        z[d == 0] = np.nan
        rgb.append(c.astype(np.uint8))
        depth.append(z)
        inst.append(np.where(ids > 0, ids, -1))
        poses.append(pose)
        if len(poses) == max_frames:
            break
    if not poses:
        raise InputError(base / "pose", "no frame with a finite pose")
    centre, size = boxes[:, :3], boxes[:, 3:6]
    return Scene(
        rgb=np.stack(rgb),
        depth=np.stack(depth),
        instance=np.stack(inst),
        cam2world=np.stack(poses),
        K=K4[:3, :3],
        obj_id=np.arange(1, len(boxes) + 1),
        obj_class=[f"class_{int(c)}" for c in boxes[:, 6]],
        box_lo=centre - size / 2,
        box_hi=centre + size / 2,
        table_top=float("nan"),
    )
