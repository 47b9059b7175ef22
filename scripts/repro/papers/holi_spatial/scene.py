"""Indoor-like scenes assembled from pybullet_data assets and rendered on CPU by pybullet's TinyRenderer.

A scene is a tiled floor, one table, objects standing on the table and on the floor (the tray, duck,
teddy, mug, lego brick, jenga block, cube, sphere and soccer ball meshes of pybullet_data, scaled to
room-object sizes), and a smooth orbiting camera trajectory. Each frame gives RGB, metric depth and the
instance id of every pixel (pybullet's segmentation buffer); ground-truth boxes are world axis-aligned
boxes from ``getAABB`` after placement (the table's collision shape is its top only, so its box is
extended down to the floor its legs stand on).
"""

from __future__ import annotations

import numpy as np

from repro.papers.holi_spatial.store import Scene

# class -> (pybullet_data file, global scaling, may stand on the table)
ASSETS: dict[str, tuple[str, float, bool]] = {
    "tray": ("tray/traybox.urdf", 0.5, False),
    "duck": ("duck_vhacd.urdf", 2.0, True),
    "teddy": ("teddy_vhacd.urdf", 2.0, True),
    "mug": ("objects/mug.urdf", 1.6, True),
    "lego": ("lego/lego.urdf", 3.0, True),
    "jenga": ("jenga/jenga.urdf", 1.4, True),
    "cube": ("cube_small.urdf", 3.0, True),
    "sphere": ("sphere_small.urdf", 1.6, True),
    "ball": ("soccerball.urdf", 0.3, False),
}
TABLE = ("table/table.urdf", 0.6)


def intrinsics(width: int, height: int, fov_deg: float) -> np.ndarray:
    """Pinhole K of pybullet's vertical field of view (square pixels, centre at the image centre)."""
    f = height / 2 / np.tan(np.radians(fov_deg) / 2)
    return np.array([[f, 0, width / 2], [0, f, height / 2], [0, 0, 1.0]])


def linear_depth(buffer: np.ndarray, near: float, far: float) -> np.ndarray:
    """Metric depth from OpenGL's non-linear depth buffer values in [0, 1]."""
    return (far * near / (far - (far - near) * buffer)).astype(np.float32)


def floor(p, client: int, tile: float, half_width: float) -> None:
    """A checkerboard floor at z = 0 of square tiles. TinyRenderer interpolates depth linearly in screen space, so
    pybullet_data's two-triangle plane renders depth several percent off at a distance; tiles of 0.5 m keep the
    error under about 1% of the distance."""
    n = int(round(2 * half_width / tile))
    for i in range(n):
        for j in range(n):
            colour = [0.92, 0.92, 0.9, 1] if (i + j) % 2 else [0.62, 0.72, 0.9, 1]
            shape = p.createVisualShape(
                p.GEOM_BOX, halfExtents=[tile / 2, tile / 2, 0.005], rgbaColor=colour, physicsClientId=client
            )
            p.createMultiBody(
                baseMass=0,
                baseVisualShapeIndex=shape,
                physicsClientId=client,
                basePosition=[(i + 0.5) * tile - half_width, (j + 0.5) * tile - half_width, -0.005],
            )


def _place(p, cls: str, xy: np.ndarray, z: float, yaw: float) -> int:
    """Load one asset at (x, y) with its lowest point on the surface at height z; return its body id."""
    path, scale, _ = ASSETS[cls]
    body = p.loadURDF(
        path,
        basePosition=[xy[0], xy[1], 1.0],
        baseOrientation=p.getQuaternionFromEuler([0, 0, yaw]),
        globalScaling=scale,
        useFixedBase=True,
    )
    lo, _ = p.getAABB(body)
    pos, orn = p.getBasePositionAndOrientation(body)
    p.resetBasePositionAndOrientation(body, [pos[0], pos[1], pos[2] - lo[2] + z], orn)
    return body


def _free_spot(
    rng,
    taken: list[tuple[np.ndarray, float]],
    radius: float,
    lo: np.ndarray,
    hi: np.ndarray,
    forbid: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray | None:
    """A random footprint centre inside [lo, hi] clear of the footprints taken (and of ``forbid``)."""
    for _ in range(200):
        xy = rng.uniform(lo, hi)
        if forbid is not None and np.all(xy > forbid[0] - radius) and np.all(xy < forbid[1] + radius):
            continue
        if all(np.linalg.norm(xy - c) > r + radius + 0.04 for c, r in taken):
            return xy
    return None


def trajectory(rng, frames: int, radius: float, height: float, arc_deg: float, target: np.ndarray) -> np.ndarray:
    """Camera centres on a smooth partial orbit with a gentle height and radius wobble."""
    start = rng.uniform(0, 2 * np.pi)
    angle = start + np.radians(arc_deg) * np.linspace(0, 1, frames)
    phase = np.linspace(0, 2 * np.pi, frames)
    r = radius * (1 + 0.08 * np.sin(phase + rng.uniform(0, 6.3)))
    z = height + 0.12 * np.sin(2 * phase + rng.uniform(0, 6.3))
    return np.stack([target[0] + r * np.cos(angle), target[1] + r * np.sin(angle), z], axis=1)


def look_at(eye: np.ndarray, target: np.ndarray) -> np.ndarray:
    """cam2world (OpenCV axes) of a camera at ``eye`` looking at ``target`` with world z up."""
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = right, down, forward, eye
    return m


def render_scene(seed: int, cfg: dict) -> Scene:
    """Assemble and render one scene; everything random is drawn from ``seed``."""
    import importlib.resources

    import pybullet as p

    rng = np.random.default_rng(seed)
    client = p.connect(p.DIRECT)
    try:
        # pybullet_data is the asset folder inside the pybullet distribution (not a package of its own)
        p.setAdditionalSearchPath(str(importlib.resources.files("pybullet_data")), physicsClientId=client)
        floor(p, client, cfg["floor_tile"], cfg["floor_half_width"])
        table = p.loadURDF(
            TABLE[0], basePosition=[0, 0, 0], globalScaling=TABLE[1], useFixedBase=True, physicsClientId=client
        )
        t_lo, t_hi = (np.array(v) for v in p.getAABB(table, physicsClientId=client))
        ids, classes, taken_floor, taken_table = [table], ["table"], [], []
        n_table, n_floor = (
            int(rng.integers(*cfg["on_table"], endpoint=True)),
            int(rng.integers(*cfg["on_floor"], endpoint=True)),
        )
        on_table = [c for c, (_, _, ok) in ASSETS.items() if ok]
        room = np.array(cfg["room_half_width"])
        picks = [(c, True) for c in rng.choice(on_table, n_table, replace=False)]
        picks += [(c, False) for c in rng.choice(list(ASSETS), n_floor, replace=False)]
        for cls, table_spot in picks:
            footprint = 0.12 if cls not in ("tray", "ball") else 0.2
            if table_spot:
                xy = _free_spot(rng, taken_table, footprint, t_lo[:2] + footprint, t_hi[:2] - footprint)
                z = t_hi[2]
            else:
                xy = _free_spot(rng, taken_floor, footprint, -room, room, forbid=(t_lo[:2], t_hi[:2]))
                z = 0.0
            if xy is None:
                continue
            (taken_table if table_spot else taken_floor).append((xy, footprint))
            ids.append(_place(p, str(cls), xy, z, float(rng.uniform(0, 2 * np.pi))))
            classes.append(str(cls))
        w, h, fov = cfg["width"], cfg["height"], cfg["fov_deg"]
        near, far = cfg["near"], cfg["far"]
        target = np.array([0.0, 0.0, float(t_hi[2]) * 0.6])
        eyes = trajectory(rng, cfg["frames"], cfg["radius"], cfg["camera_height"], cfg["arc_deg"], target)
        proj = p.computeProjectionMatrixFOV(fov, w / h, near, far)
        rgb, depth, inst, poses = [], [], [], []
        for eye in eyes:
            view = p.computeViewMatrix(eye.tolist(), target.tolist(), [0, 0, 1])
            _, _, img, dep, seg = p.getCameraImage(
                w, h, view, proj, renderer=p.ER_TINY_RENDERER, physicsClientId=client
            )
            seg = np.asarray(seg, dtype=np.int32).reshape(h, w)
            rgb.append(np.asarray(img, dtype=np.uint8).reshape(h, w, 4)[..., :3])
            depth.append(linear_depth(np.asarray(dep, dtype=np.float64).reshape(h, w), near, far))
            inst.append(np.where(np.isin(seg, ids), seg, -1))
            poses.append(look_at(eye, target))
    finally:
        p.disconnect(client)
    depth_arr, inst_arr, pose_arr, K = (
        np.stack(depth),
        np.stack(inst).astype(np.int32),
        np.stack(poses),
        intrinsics(w, h, fov),
    )
    keep, lo, hi = surface_boxes(depth_arr, inst_arr, pose_arr, K, np.array(ids), cfg["min_gt_pixels"])
    return Scene(
        rgb=np.stack(rgb),
        depth=depth_arr,
        instance=inst_arr,
        cam2world=pose_arr,
        K=K,
        obj_id=np.array(ids)[keep],
        obj_class=[c for c, k in zip(classes, keep, strict=True) if k],
        box_lo=lo,
        box_hi=hi,
        table_top=float(t_hi[2]),
    )


def surface_boxes(
    depth: np.ndarray, instance: np.ndarray, poses: np.ndarray, K: np.ndarray, ids: np.ndarray, min_pixels: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ground-truth boxes the way ScanNet's are made (axis-aligned box of the instance's reconstructed surface):
    the box of every object's pixels over all frames, back-projected with the true depth. Objects seen in fewer
    than ``min_pixels`` pixels in total are left out (nothing to annotate)."""
    from repro.papers.holi_spatial.geometry import backproject

    pts: dict[int, list[np.ndarray]] = {int(i): [] for i in ids}
    for d, seg, pose in zip(depth, instance, poses, strict=True):
        for i in ids:
            m = seg == i
            if m.any():
                pts[int(i)].append(backproject(d, K, pose, m))
    keep = np.array([sum(len(a) for a in pts[int(i)]) >= min_pixels for i in ids])
    lo = np.array([np.concatenate(pts[int(i)]).min(0) for i, k in zip(ids, keep, strict=True) if k]).reshape(-1, 3)
    hi = np.array([np.concatenate(pts[int(i)]).max(0) for i, k in zip(ids, keep, strict=True) if k]).reshape(-1, 3)
    return keep, lo, hi
