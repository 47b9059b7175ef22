"""Reference motions of graded difficulty with injected flaws (no real mocap ships in any package).

A clip is a family (whole-body sway, squat, arm swing, single-leg stance, hop) and a difficulty level d in [0, 1]
that scales its amplitudes and frequencies; joint angles are smooth sums of sinusoids around a rest pose,
clipped to the joint ranges. Flaws imitate mocap artefacts on a share of the clips, each on a short segment with a
ground-truth mask: a teleport (the pose of a joint group jumps by a fixed offset), a sign flip (a few joints
mirrored about their rest angle) and high-frequency jitter. Velocities and accelerations come from central finite
differences of the (flawed) joint angles, as a mocap pipeline would compute them.
"""

from __future__ import annotations

import numpy as np

from repro.papers.tvs.humanoid import JOINT_GROUPS, Humanoid

FAMILIES = ("sway", "squat", "arm_swing", "single_leg", "hop")
FLAWS = ("teleport", "sign_flip", "jitter")


def _joints(h: Humanoid, prefixes: tuple[str, ...]) -> np.ndarray:
    return np.array([i for i, n in enumerate(h.joint_names) if n.startswith(prefixes)], dtype=int)


def rest_pose(h: Humanoid) -> np.ndarray:
    lo, hi = h.model.jnt_range[1:, 0], h.model.jnt_range[1:, 1]
    return np.clip(np.zeros(len(h.joint_names)), lo + 0.05, hi - 0.05)


def family_joints(h: Humanoid, family: str) -> np.ndarray:
    groups = {
        "sway": ("lowerback", "upperback", "thorax", "lhumerus", "rhumerus", "lfemur", "rfemur"),
        "squat": ("lfemurrx", "rfemurrx", "ltibia", "rtibia", "lfootrx", "rfootrx", "lowerbackrx"),
        "arm_swing": ("lhumerus", "rhumerus", "lradius", "rradius", "lclavicle", "rclavicle"),
        "single_leg": ("lfemur", "ltibia", "lfoot", "rfemurrz", "thorax", "lhumerusrz", "rhumerusrz"),
        "hop": ("lfemurrx", "rfemurrx", "ltibia", "rtibia", "lfootrx", "rfootrx", "lhumerusrx", "rhumerusrx"),
    }
    return _joints(h, groups[family])


def generate(
    h: Humanoid, family: str, level: float, frames: int, fps: float, rng: np.random.Generator, cfg: dict
) -> np.ndarray:
    """qpos (frames, nq) of one clip."""
    t = np.arange(frames) / fps
    lo, hi = h.model.jnt_range[1:, 0], h.model.jnt_range[1:, 1]
    q = np.tile(rest_pose(h), (frames, 1))
    joints = family_joints(h, family)
    amp = cfg["amplitude"][0] + level * (cfg["amplitude"][1] - cfg["amplitude"][0])
    freq = cfg["frequency"][0] + level * (cfg["frequency"][1] - cfg["frequency"][0])
    for j in joints:
        for harmonic in (1.0, 2.0):
            a = amp * rng.uniform(0.5, 1.0) / harmonic
            f = freq * harmonic * rng.uniform(0.8, 1.2)
            q[:, j] += a * np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
    # the whole body keeps a small baseline motion so that every clip exercises every joint a little
    q += cfg["baseline"] * np.sin(2 * np.pi * 0.4 * t[:, None] + rng.uniform(0, 2 * np.pi, len(lo)))
    q = np.clip(q, lo, hi)
    qpos = np.tile(h.model.qpos0, (frames, 1))
    qpos[:, h.hinge_qpos] = q
    if family == "hop":
        qpos[:, 2] += amp * 0.3 * np.abs(np.sin(np.pi * freq * t))
    return qpos


def inject(h: Humanoid, qpos: np.ndarray, rng: np.random.Generator, cfg: dict) -> tuple[np.ndarray, np.ndarray, str]:
    """One flaw on a random segment: the flawed qpos, its frame mask and the flaw kind."""
    frames = len(qpos)
    kind = str(rng.choice(FLAWS))
    length = int(rng.integers(*cfg["segment_frames"], endpoint=True))
    start = int(rng.integers(5, frames - length - 5))
    mask = np.zeros(frames, dtype=bool)
    mask[start : start + length] = True
    out = qpos.copy()
    lo, hi = h.model.jnt_range[1:, 0], h.model.jnt_range[1:, 1]
    group = list(JOINT_GROUPS)[int(rng.integers(len(JOINT_GROUPS)))]
    joints = _joints(h, JOINT_GROUPS[group])
    q = out[:, h.hinge_qpos]
    if kind == "teleport":
        q[start : start + length, joints] += cfg["teleport_rad"] * rng.choice([-1, 1], len(joints))
    elif kind == "sign_flip":
        flip = rng.choice(joints, min(4, len(joints)), replace=False)
        rest = rest_pose(h)[flip]
        q[start : start + length, flip] = 2 * rest - q[start : start + length, flip]
    else:
        q[start : start + length, joints] += rng.normal(0, cfg["jitter_rad"], (length, len(joints)))
    out[:, h.hinge_qpos] = np.clip(q, lo, hi)
    return out, mask, kind


def derivatives(h: Humanoid, qpos: np.ndarray, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """qvel and qacc (frames, nv) by central finite differences (root: linear velocity of the position; the root
    orientation is fixed in the generated clips, so its angular velocity is zero)."""
    import mujoco

    dt = 1.0 / fps
    frames = len(qpos)
    qvel = np.zeros((frames, h.model.nv))
    for k in range(frames):
        a, b = max(k - 1, 0), min(k + 1, frames - 1)
        mujoco.mj_differentiatePos(h.model, qvel[k], (b - a) * dt, qpos[a], qpos[b])
    qacc = np.gradient(qvel, dt, axis=0)
    return qvel, qacc
