"""Full-scale motion readers: AMASS SMPL-H ``.npz`` clips and BVH files, retargeted to the CMU humanoid.

- AMASS (``poses`` (T, 156) axis-angle of 52 SMPL-H joints, ``trans`` (T, 3), ``mocap_framerate``): each body
  joint's rotation is decomposed into the Euler angles of the CMU humanoid's hinges of the matching bone.
- BVH (``HIERARCHY`` with per-joint ``CHANNELS`` then ``MOTION`` with ``Frames:`` and ``Frame Time:``): CMU-style
  joint names map to the humanoid's bones; rotation channels in degrees are converted to radians.

Retargeting is approximate: a direct Euler mapping without per-joint axis calibration or bone-length scaling;
clips are resampled to the configured rate, the root keeps its height, and velocities/accelerations come from the
same finite differences as the generated motions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.workflow.io import InputError

# SMPL joint index -> CMU humanoid bone (hinges <bone>rz, ry, rx where they exist)
SMPL_TO_CMU = {
    1: "lfemur",
    2: "rfemur",
    3: "lowerback",
    4: "ltibia",
    5: "rtibia",
    6: "upperback",
    7: "lfoot",
    8: "rfoot",
    9: "thorax",
    10: "ltoes",
    11: "rtoes",
    12: "lowerneck",
    13: "lclavicle",
    14: "rclavicle",
    15: "head",
    16: "lhumerus",
    17: "rhumerus",
    18: "lradius",
    19: "rradius",
    20: "lwrist",
    21: "rwrist",
}
BVH_TO_CMU = {
    "LeftUpLeg": "lfemur",
    "RightUpLeg": "rfemur",
    "LeftLeg": "ltibia",
    "RightLeg": "rtibia",
    "LeftFoot": "lfoot",
    "RightFoot": "rfoot",
    "LeftToeBase": "ltoes",
    "RightToeBase": "rtoes",
    "LowerBack": "lowerback",
    "Spine": "upperback",
    "Spine1": "thorax",
    "Neck": "lowerneck",
    "Neck1": "upperneck",
    "Head": "head",
    "LeftShoulder": "lclavicle",
    "RightShoulder": "rclavicle",
    "LeftArm": "lhumerus",
    "RightArm": "rhumerus",
    "LeftForeArm": "lradius",
    "RightForeArm": "rradius",
    "LeftHand": "lwrist",
    "RightHand": "rwrist",
}


def read_amass(path: str | Path) -> dict:
    """Per-bone Euler angles (T, 3) in z, y, x order (radians), root translation and the frame rate."""
    from scipy.spatial.transform import Rotation

    try:
        with np.load(path) as z:
            arrays = {k: z[k] for k in ("poses", "trans", "mocap_framerate") if k in z}
    except (OSError, ValueError) as err:
        raise InputError(path, f"not a readable npz file ({err})") from err
    missing = [k for k in ("poses", "trans", "mocap_framerate") if k not in arrays]
    if missing:
        raise InputError(path, f"not an AMASS clip: missing {missing}")
    poses, trans, fps = arrays["poses"], arrays["trans"], float(arrays["mocap_framerate"])
    if poses.ndim != 2 or poses.shape[1] < 66 or poses.shape[1] % 3 or len(trans) != len(poses):
        raise InputError(
            path, f"expected poses (T, 3 x joints >= 66) and trans (T, 3), got {poses.shape}, {trans.shape}"
        )
    aa = poses.reshape(len(poses), -1, 3)
    bones = {bone: Rotation.from_rotvec(aa[:, j]).as_euler("ZYX") for j, bone in SMPL_TO_CMU.items()}
    return {"bones": bones, "trans": trans.astype(float), "fps": fps}


def read_bvh(path: str | Path) -> dict:
    """Per-bone Euler angles (T, 3) in z, y, x order (radians) of a BVH file's mapped joints, root translation
    and the frame rate."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise InputError(path, f"cannot read ({err})") from err
    if "HIERARCHY" not in text or "MOTION" not in text:
        raise InputError(path, "not a BVH file (HIERARCHY and MOTION sections expected)")
    head, motion = text.split("MOTION", 1)
    channels, stack = [], []
    for line in head.splitlines():
        words = line.split()
        if words[:1] in (["ROOT"], ["JOINT"]):
            stack.append(words[1])
        elif words[:1] == ["End"]:
            stack.append(None)
        elif words[:1] == ["}"] and stack:
            stack.pop()
        elif words[:1] == ["CHANNELS"]:
            channels += [(stack[-1], c) for c in words[2 : 2 + int(words[1])]]
    lines = [ln for ln in motion.strip().splitlines() if ln.strip()]
    try:
        frames = int(lines[0].split(":")[1])
        frame_time = float(lines[1].split(":")[1])
        data = np.array([[float(x) for x in ln.split()] for ln in lines[2 : 2 + frames]])
    except (IndexError, ValueError) as err:
        raise InputError(path, f"malformed MOTION section ({err})") from err
    if data.shape != (frames, len(channels)):
        raise InputError(path, f"expected {frames} frames of {len(channels)} channels, got {data.shape}")
    col = {key: i for i, key in enumerate(channels)}
    root = channels[0][0]
    trans = np.stack([data[:, col[(root, f"{a}position")]] for a in "XYZ"], axis=1) / 100.0  # cm -> m
    bones = {}
    for joint, bone in BVH_TO_CMU.items():
        if (joint, "Zrotation") in col:
            bones[bone] = np.radians(
                np.stack(
                    [
                        data[:, col.get((joint, f"{a}rotation"), 0)]
                        if (joint, f"{a}rotation") in col
                        else np.zeros(frames)
                        for a in "ZYX"
                    ],
                    axis=1,
                )
            )
    return {"bones": bones, "trans": trans, "fps": 1.0 / frame_time}


def retarget(h, clip: dict, fps: float, frames: int) -> np.ndarray:
    """qpos (frames, nq) of the humanoid: hinge <bone>r{z,y,x} gets the bone's Euler angle about that axis."""
    t_src = np.arange(len(clip["trans"])) / clip["fps"]
    t = np.arange(frames) / fps
    if t[-1] > t_src[-1]:
        raise InputError("clip", f"shorter ({t_src[-1]:.2f} s) than the configured {t[-1]:.2f} s")
    qpos = np.tile(h.model.qpos0, (frames, 1))
    lo, hi = h.model.jnt_range[1:, 0], h.model.jnt_range[1:, 1]
    for k, name in enumerate(h.joint_names):
        bone, axis = name[:-2], name[-1]
        if bone in clip["bones"]:
            angle = clip["bones"][bone][:, "zyx".index(axis)]
            qpos[:, h.hinge_qpos[k]] = np.clip(np.interp(t, t_src, angle), lo[k], hi[k])
    for a in range(2):
        qpos[:, a] = np.interp(t, t_src, clip["trans"][:, a] - clip["trans"][0, a])
    return qpos


def convert_files(package: str, s: dict) -> dict:
    """The configured AMASS or BVH files in the canonical motion arrays (no injected flaws: flaw_mask all False)."""
    from repro.papers.tvs.humanoid import XML, load
    from repro.papers.tvs.motions import derivatives

    h = load(package, s["timestep"])
    reader = read_amass if s["source"] == "amass" else read_bvh
    out = {k: [] for k in ("qpos", "qvel", "qacc", "flaw_mask", "family", "level", "flaw")}
    for path in s["mocap"]["files"]:
        qpos = retarget(h, reader(path), s["fps"], s["frames"])
        qvel, qacc = derivatives(h, qpos, s["fps"])
        for key, value in zip(
            out, (qpos, qvel, qacc, np.zeros(len(qpos), bool), Path(path).stem, np.nan, "none"), strict=True
        ):
            out[key].append(value)
    return {k: np.array(v) for k, v in out.items()} | {"fps": float(s["fps"]), "model_xml": XML}
