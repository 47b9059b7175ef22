"""Reader of ScanNet v2 scenes exported to frames plus VoteNet's detection export, converted to the canonical
scene format (repro.papers.holi_spatial.store).

Layout under ``root`` (ScanNet's ``scans/<scene>/`` after SensReader, the 2D instance labels, the scene's meta
file, and the four arrays VoteNet's ``scannet/batch_load_scannet_data.py`` writes per scene)::

    scans/<scene>/<scene>.txt                     meta file: ``axisAlignment = m00 m01 ... m33`` (row-major 4x4)
    scans/<scene>/color/<i>.jpg                   colour frames (any size; resized to the depth size)
    scans/<scene>/depth/<i>.png                   uint16 depth in millimetres, 0 = no measurement
    scans/<scene>/pose/<i>.txt                    4x4 camera-to-world of the scan (OpenCV axes); -inf rows: lost
    scans/<scene>/intrinsic/intrinsic_depth.txt   4x4 (upper-left 3x3 is K of the depth camera)
    scans/<scene>/instance-filt/<i>.png           2D instance ids (objectId + 1; 0 = none), <scene>_2d-instance-filt
    scans/<scene>/<scene>_vert.npy                (V, 6) mesh vertices xyz rgb, axis-aligned
    scans/<scene>/<scene>_ins_label.npy           (V,) instance id per vertex (objectId + 1; 0 = none)
    scans/<scene>/<scene>_sem_label.npy           (V,) NYU40 class id per vertex
    scans/<scene>/<scene>_bbox.npy                (N, 7) centre xyz, size xyz, NYU40 id: axis-aligned, one row per
                                                  instance of the 18 benchmark classes (rows of other classes
                                                  filtered out, so row k is *not* instance k + 1)

VoteNet's export applies the meta file's axis alignment to the vertices and boxes, while the poses stay in the
scan's frame: the reader moves the cameras into the aligned frame (``A @ cam2world``). Boxes are paired with
the 2D instance ids through the vertices: each instance's axis-aligned box is computed from its vertices, and
each row of ``_bbox.npy`` is matched to the instance whose box and class it equals (within 1 mm). A row that
fails its field checks (7 finite fields, positive sizes, a benchmark class id) or matches no instance is
refused; refused rows and frames without a pose are counted (first ten named) in the report that the data
stage writes to the manifest, and more than ``max_refused`` of the rows refused stops the run.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from repro.papers.holi_spatial.store import Scene
from repro.workflow.io import InputError

log = logging.getLogger(__name__)

# NYU40 ids of ScanNet's 18 detection classes (VoteNet's OBJ_CLASS_IDS) and their names (VoteNet's type2class;
# NYU40 id 39 "otherfurniture" is VoteNet's "garbagebin").
BENCHMARK_CLASSES = {
    3: "cabinet",
    4: "bed",
    5: "chair",
    6: "sofa",
    7: "table",
    8: "door",
    9: "window",
    10: "bookshelf",
    11: "picture",
    12: "counter",
    14: "desk",
    16: "curtain",
    24: "refrigerator",
    28: "shower curtain",
    33: "toilet",
    34: "sink",
    36: "bathtub",
    39: "garbagebin",
}
SCANNET_CLASSES = tuple(BENCHMARK_CLASSES.values())
MATCH_TOL = 1e-3  # m: a _bbox.npy row equals the box of its instance's vertices up to float rounding


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


def read_axis_alignment(path: Path) -> np.ndarray:
    """The 4x4 ``axisAlignment`` of a ScanNet meta file (``key = value`` lines)."""
    if not path.is_file():
        raise InputError(path, "missing (the scene's meta file with axisAlignment)")
    for line in path.read_text(errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "axisAlignment":
            try:
                numbers = [float(x) for x in value.split()]
            except ValueError as err:
                raise InputError(path, f"axisAlignment is not 16 numbers ({err})") from err
            if len(numbers) != 16 or not np.all(np.isfinite(numbers)):
                raise InputError(path, f"axisAlignment has {len(numbers)} numbers, expected 16 finite ones")
            return np.array(numbers).reshape(4, 4)
    raise InputError(path, "no axisAlignment line (VoteNet's export aligns the boxes with it)")


def _array(path: Path, ndim: int, cols: int | None = None) -> np.ndarray:
    if not path.is_file():
        raise InputError(path, "missing (VoteNet's ScanNet export)")
    try:
        a = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise InputError(path, f"not a readable .npy array ({err})") from err
    if a.ndim != ndim or (cols is not None and a.shape[1] != cols):
        want = f"(N, {cols})" if cols is not None else "(N,)"
        raise InputError(path, f"expected an {want} array, got {a.shape}")
    return a


def instance_boxes(vert: np.ndarray, ins: np.ndarray, sem: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray, int]]:
    """Per instance id (> 0): the axis-aligned box (lo, hi) of its vertices and its majority NYU40 id."""
    out = {}
    for iid in np.unique(ins[ins > 0]):
        pts = vert[ins == iid, :3]
        labels, counts = np.unique(sem[ins == iid], return_counts=True)
        out[int(iid)] = (pts.min(0), pts.max(0), int(labels[np.argmax(counts)]))
    return out


def pair_boxes(boxes: np.ndarray, inst: dict, path: Path) -> tuple[list[int], list[tuple[int, str]]]:
    """Instance id of each ``_bbox.npy`` row (-1 when refused) and the refused rows with their reason."""
    ids, refused = [], []
    for k, row in enumerate(boxes):
        problem = None
        if not np.all(np.isfinite(row)):
            problem = "non-finite field"
        elif np.any(row[3:6] <= 0):
            problem = "size not positive"
        elif float(row[6]) != int(row[6]) or int(row[6]) not in BENCHMARK_CLASSES:
            problem = f"class id {row[6]:g} is not one of the 18 benchmark NYU40 ids"
        else:
            lo, hi = row[:3] - row[3:6] / 2, row[:3] + row[3:6] / 2
            hits = [
                iid
                for iid, (ilo, ihi, cls) in inst.items()
                if cls == int(row[6])
                and np.all(np.abs(ilo - lo) <= MATCH_TOL)
                and np.all(np.abs(ihi - hi) <= MATCH_TOL)
            ]
            if len(hits) != 1:
                problem = "matches no instance's vertices" if not hits else f"matches instances {hits}"
            else:
                ids.append(hits[0])
                continue
        ids.append(-1)
        refused.append((k, problem))
    return ids, refused


def read_scannet_scene(
    root: str | Path, scene: str, stride: int, max_frames: int, max_refused: float = 0.05
) -> tuple[Scene, dict]:
    """Every ``stride``-th frame with a valid pose (at most ``max_frames``) of one exported ScanNet scene, in
    the axis-aligned frame of its boxes, and a report of what was read and refused."""
    base = Path(root) / "scans" / scene
    if not base.is_dir():
        raise InputError(base, "scene folder not found")
    align = read_axis_alignment(base / f"{scene}.txt")
    K4 = read_matrix(base / "intrinsic" / "intrinsic_depth.txt", (4, 4))
    boxes_path = base / f"{scene}_bbox.npy"
    boxes = _array(boxes_path, 2, 7)
    vert = _array(base / f"{scene}_vert.npy", 2, 6)
    ins = _array(base / f"{scene}_ins_label.npy", 1)
    sem = _array(base / f"{scene}_sem_label.npy", 1)
    if not len(vert) == len(ins) == len(sem):
        raise InputError(base / f"{scene}_vert.npy", f"{len(vert)} vertices but {len(ins)} / {len(sem)} labels")
    ids, refused = pair_boxes(boxes, instance_boxes(vert, ins.astype(np.int64), sem.astype(np.int64)), boxes_path)
    if refused:
        log.warning("%s: %d of %d box rows refused: %s", boxes_path, len(refused), len(boxes), refused[:10])
    if len(boxes) and len(refused) > max_refused * len(boxes):
        raise InputError(
            boxes_path,
            f"{len(refused)} of {len(boxes)} rows refused (more than {max_refused:.0%}); first: {refused[:10]}",
        )
    keep = [k for k, i in enumerate(ids) if i > 0]
    read = [base / f"{scene}.txt", base / "intrinsic" / "intrinsic_depth.txt"]
    read += [base / f"{scene}_{name}.npy" for name in ("bbox", "vert", "ins_label", "sem_label")]
    rgb, depth, inst_frames, poses, lost, holes = [], [], [], [], [], 0
    for i in _frame_ids(base / "depth")[::stride]:
        pose = read_matrix(base / "pose" / f"{i}.txt", (4, 4))
        read.append(base / "pose" / f"{i}.txt")
        if not np.all(np.isfinite(pose)):
            lost.append(i)
            continue
        read += [
            base / sub / f"{i}.{ext}" for sub, ext in (("depth", "png"), ("color", "jpg"), ("instance-filt", "png"))
        ]
        d = _image(base / "depth" / f"{i}.png")
        if d.dtype != np.uint16 or d.ndim != 2:
            raise InputError(base / "depth" / f"{i}.png", f"expected 16-bit single-channel depth, got {d.dtype}")
        size = (d.shape[1], d.shape[0])
        c = _image(base / "color" / f"{i}.jpg", size)[..., :3]
        labels = _image(base / "instance-filt" / f"{i}.png", size, nearest=True).astype(np.int32)
        z = d.astype(np.float32) / 1000.0
        z[d == 0] = np.nan  # ScanNet's missing-depth code
        holes += int(np.sum(d == 0))
        rgb.append(c.astype(np.uint8))
        depth.append(z)
        inst_frames.append(np.where(labels > 0, labels, -1))
        poses.append(align @ pose)
        if len(poses) == max_frames:
            break
    if not poses:
        raise InputError(base / "pose", "no frame with a finite pose")
    centre, extent = boxes[keep, :3], boxes[keep, 3:6]
    report = {
        "frames": len(poses),
        "frames_lost_tracking": len(lost),
        "frames_lost_first": lost[:10],
        "depth_missing_pixels": holes,
        "box_rows": int(len(boxes)),
        "box_rows_refused": len(refused),
        "box_rows_refused_first": [f"row {k}: {why}" for k, why in refused[:10]],
        "inputs": [str(f) for f in read],
    }
    scene_out = Scene(
        rgb=np.stack(rgb),
        depth=np.stack(depth),
        instance=np.stack(inst_frames),
        cam2world=np.stack(poses),
        K=K4[:3, :3],
        obj_id=np.array([ids[k] for k in keep], dtype=np.int64),
        obj_class=[BENCHMARK_CLASSES[int(boxes[k, 6])] for k in keep],
        box_lo=centre - extent / 2,
        box_hi=centre + extent / 2,
        table_top=float("nan"),
    )
    return scene_out, report


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
