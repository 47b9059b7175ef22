"""Full-scale motion readers: AMASS SMPL-H ``.npz`` clips and BVH files, retargeted to the CMU humanoid.

- AMASS (``<subset>/<subject>/<clip>_poses.npz`` with ``poses`` (T, 156) axis-angle of 52 SMPL-H joints,
  ``trans`` (T, 3) metres, Z up, ``mocap_framerate``): each body joint's rotation is decomposed into the Euler
  angles of the CMU humanoid's hinges of the matching bone.
- BVH (``HIERARCHY`` with per-joint ``CHANNELS`` then ``MOTION`` with ``Frames:`` and ``Frame Time:``, Y up,
  centimetres): CMU-style joint names map to the humanoid's bones; rotation channels in degrees become radians.

The files are the ``mocap.pattern`` matches under the ``mocap.root`` folder, in sorted order. They are read one at
a time: a first pass counts each file's windows of ``frames`` frames at ``fps`` (non-overlapping, from the start),
``clips`` windows are chosen round-robin over the files (the first window of every file, then the second, ...),
and a second pass retargets only the chosen windows. A file whose values fail the per-frame checks (finite
poses and translation, a positive frame rate) or that is shorter than one window is refused: refused files are
counted and named (first ten) in the log and the manifest, and more than ``max_refused`` of the files refused,
or fewer windows than ``clips``, stops the run. A file that is not in the layout (unreadable, missing arrays,
wrong shapes) is an InputError naming it.

Flawed Motion Detection needs labelled flaws, which mocap files do not carry: as on the generated clips, a share
``flaws.share`` of the windows gets one injected flaw (teleport, sign flip or jitter on a segment) with its
ground-truth mask, so the detection claims are measured on real motions.

Retargeting is approximate: a direct Euler mapping without per-joint axis calibration or bone-length scaling;
clips are resampled to the configured rate, the root keeps its height and orientation, and velocities and
accelerations come from the same finite differences as the generated motions.
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


class Refused(Exception):
    """A file in the layout whose values fail the reader's checks (counted, not fatal below the threshold)."""


def read_amass(path: str | Path) -> dict:
    """Per-bone Euler angles (T, 3) in z, y, x order (radians), root translation (Z up, metres) and the rate."""
    from scipy.spatial.transform import Rotation

    try:
        with np.load(path) as z:
            arrays = {k: z[k] for k in ("poses", "trans", "mocap_framerate") if k in z}
    except (OSError, ValueError) as err:
        raise InputError(path, f"not a readable npz file ({err})") from err
    missing = [k for k in ("poses", "trans", "mocap_framerate") if k not in arrays]
    if missing:
        raise InputError(path, f"not an AMASS clip: missing {missing}")
    poses, trans = arrays["poses"], arrays["trans"]
    if poses.ndim != 2 or poses.shape[1] < 66 or poses.shape[1] % 3 or trans.shape != (len(poses), 3):
        raise InputError(
            path, f"expected poses (T, 3 x joints >= 66) and trans (T, 3), got {poses.shape}, {trans.shape}"
        )
    fps = float(arrays["mocap_framerate"])
    if not np.isfinite(fps) or fps <= 0:
        raise Refused(f"mocap_framerate {fps} is not positive")
    bad = ~(np.all(np.isfinite(poses), axis=1) & np.all(np.isfinite(trans), axis=1))
    if bad.any():
        raise Refused(
            f"{int(bad.sum())} frames with non-finite poses or trans (first {np.flatnonzero(bad)[:5].tolist()})"
        )
    aa = poses.reshape(len(poses), -1, 3)
    bones = {bone: Rotation.from_rotvec(aa[:, j]).as_euler("ZYX") for j, bone in SMPL_TO_CMU.items()}
    return {"bones": bones, "trans": trans.astype(float), "fps": fps}


def amass_frames(path: str | Path) -> tuple[int, float]:
    """Frame count and rate of an AMASS clip (first pass: what its windows will be)."""
    clip = read_amass(path)
    return len(clip["trans"]), clip["fps"]


def read_bvh(path: str | Path) -> dict:
    """Per-bone Euler angles (T, 3) in z, y, x order (radians) of a BVH file's mapped joints, root translation
    (converted to Z up, metres) and the frame rate. Every MOTION line must hold one number per channel; a line
    that does not (a truncated file) refuses the file."""
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
    except (IndexError, ValueError) as err:
        raise InputError(path, f"malformed MOTION header (Frames: and Frame Time: expected) ({err})") from err
    rows, bad = [], []
    for k, line in enumerate(lines[2:]):
        try:
            values = [float(x) for x in line.split()]
        except ValueError:
            values = []
        if len(values) != len(channels) or not np.all(np.isfinite(values)):
            bad.append(k)
        else:
            rows.append(values)
    if bad or len(rows) != frames:
        raise Refused(
            f"{frames} frames of {len(channels)} channels declared; {len(rows)} well-formed lines, "
            f"{len(bad)} malformed (first {bad[:5]})"
        )
    if frame_time <= 0:
        raise Refused(f"Frame Time {frame_time} is not positive")
    data = np.array(rows).reshape(frames, len(channels))
    col = {key: i for i, key in enumerate(channels)}
    root = channels[0][0]
    pos = np.stack([data[:, col[(root, f"{a}position")]] for a in "XYZ"], axis=1) / 100.0  # cm -> m
    trans = np.stack([pos[:, 0], -pos[:, 2], pos[:, 1]], axis=1)  # Y up -> Z up (x, -z, y)
    bones = {}
    for joint, bone in BVH_TO_CMU.items():
        if (joint, "Zrotation") in col:
            bones[bone] = np.radians(
                np.stack(
                    [
                        data[:, col[(joint, f"{a}rotation")]] if (joint, f"{a}rotation") in col else np.zeros(frames)
                        for a in "ZYX"
                    ],
                    axis=1,
                )
            )
    return {"bones": bones, "trans": trans, "fps": 1.0 / frame_time}


def retarget(h, clip: dict, fps: float, frames: int, start: int = 0, path: str | Path = "clip") -> np.ndarray:
    """qpos (frames, nq) of the humanoid for the window starting at output frame ``start``: hinge <bone>r{z,y,x}
    gets the bone's Euler angle about that axis; the root moves in the plane relative to the window's start."""
    t_src = np.arange(len(clip["trans"])) / clip["fps"]
    t = (start + np.arange(frames)) / fps
    if t[-1] > t_src[-1]:
        raise InputError(path, f"shorter ({t_src[-1]:.2f} s) than the window ending at {t[-1]:.2f} s")
    qpos = np.tile(h.model.qpos0, (frames, 1))
    lo, hi = h.model.jnt_range[1:, 0], h.model.jnt_range[1:, 1]
    for k, name in enumerate(h.joint_names):
        bone, axis = name[:-2], name[-1]
        if bone in clip["bones"]:
            angle = clip["bones"][bone][:, "zyx".index(axis)]
            qpos[:, h.hinge_qpos[k]] = np.clip(np.interp(t, t_src, angle), lo[k], hi[k])
    for a in range(2):
        moved = np.interp(t, t_src, clip["trans"][:, a])
        qpos[:, a] = moved - moved[0]
    return qpos


def windows_of(n_frames: int, rate: float, fps: float, frames: int) -> int:
    """Non-overlapping windows of ``frames`` frames at ``fps`` in a clip of ``n_frames`` frames at ``rate``."""
    duration = (n_frames - 1) / rate
    return int(np.floor(duration * fps + 1e-9 + 1) // frames)


def choose_windows(counts: list[int], clips: int) -> list[tuple[int, int]]:
    """(file, window) pairs, round-robin over the files: every file's first window, then every second one, ..."""
    chosen: list[tuple[int, int]] = []
    for w in range(max(counts, default=0)):
        for f, n in enumerate(counts):
            if w < n and len(chosen) < clips:
                chosen.append((f, w))
    return chosen


def mocap_files(s: dict) -> list[Path]:
    """The mocap files of the config: ``mocap.pattern`` under ``mocap.root``, sorted; none is an InputError."""
    root = s["mocap"]["root"]
    if not root or not Path(root).is_dir():
        raise InputError(root or "papers.tvs.mocap.root", "mocap folder not found (papers.tvs.mocap.root)")
    files = sorted(p for p in Path(root).glob(s["mocap"]["pattern"]) if p.is_file())
    if not files:
        raise InputError(root, f"no file matches {s['mocap']['pattern']!r}")
    return files


def convert_files(package: str, s: dict) -> tuple[dict, dict]:
    """``clips`` windows of the configured AMASS or BVH files in the canonical motion arrays (with injected flaws
    on a share of them, as on generated clips) and the reader's report for the manifest."""
    import logging

    from repro.papers.tvs.humanoid import XML, load
    from repro.papers.tvs.motions import derivatives, inject

    log = logging.getLogger(__name__)
    h = load(package, s["timestep"])
    reader = read_amass if s["source"] == "amass" else read_bvh
    files = mocap_files(s)
    counts, refused = [], []
    for path in files:
        try:
            clip = reader(path)
            counts.append(windows_of(len(clip["trans"]), clip["fps"], s["fps"], s["frames"]))
        except Refused as why:
            counts.append(0)
            refused.append(f"{path}: {why}")
            continue
        if counts[-1] == 0:
            refused.append(f"{path}: shorter than one window of {s['frames']} frames at {s['fps']:g} fps")
    if refused:
        log.warning("%d of %d mocap files refused: %s", len(refused), len(files), refused[:10])
    if len(refused) > s["mocap"]["max_refused"] * len(files):
        raise InputError(
            s["mocap"]["root"],
            f"{len(refused)} of {len(files)} files refused (more than {s['mocap']['max_refused']:.0%}); first: {refused[:10]}",
        )
    chosen = choose_windows(counts, s["clips"])
    if len(chosen) < s["clips"]:
        raise InputError(
            s["mocap"]["root"],
            f"{len(chosen)} windows of {s['frames']} frames in {len(files)} files; clips asks for {s['clips']}",
        )
    rng = np.random.default_rng(s["motion_seed"])
    flawed = rng.permutation(len(chosen)) < round(s["flaws"]["share"] * len(chosen))
    by_file: dict[int, list[int]] = {}
    for k, (f, _w) in enumerate(chosen):
        by_file.setdefault(f, []).append(k)
    out = {k: [None] * len(chosen) for k in ("qpos", "qvel", "qacc", "flaw_mask", "family", "level", "flaw")}
    for f in sorted(by_file):
        clip = reader(files[f])
        for k in by_file[f]:
            w = chosen[k][1]
            qpos = retarget(h, clip, s["fps"], s["frames"], start=w * s["frames"], path=files[f])
            mask, kind = np.zeros(s["frames"], dtype=bool), "none"
            if flawed[k]:
                qpos, mask, kind = inject(h, qpos, np.random.default_rng([s["motion_seed"], k]), s["flaws"])
            qvel, qacc = derivatives(h, qpos, s["fps"])
            label = f"{files[f].relative_to(s['mocap']['root'])}#{w}"
            for key, value in zip(out, (qpos, qvel, qacc, mask, label, np.nan, kind), strict=True):
                out[key][k] = value
    report = {
        "files": len(files),
        "files_refused": len(refused),
        "files_refused_first": refused[:10],
        "windows_available": int(np.sum(counts)),
        "windows_used": len(chosen),
        "windows_flawed": int(flawed.sum()),
        "inputs": [str(files[f]) for f in range(len(files))],
    }
    arrays = {k: np.array(v) for k, v in out.items()} | {"fps": float(s["fps"]), "model_xml": XML}
    return arrays, report
