"""Imitation stand-in for the paper's RL policies (UHC, PHC+): PD tracking with inverse-dynamics feed-forward.

Each actuated joint gets tau = tau_ff + kp * gear * (q_ref - q) + kd * gear * (qdot_ref - qdot), clipped to
``torque_limit`` x gear (the actuators' control range). The free root follows the reference (ideal residual force
control, the mechanism UHC uses to hold the root; with MuJoCo's explicit root PD the humanoid drifts off under
pushes at the budget's time step), and gets the reference's residual force so the limbs see the right dynamics. Random pushes (seeded per clip, identical for every policy)
perturb the bodies. Two policies differ in gains and torque limits. Errors: per-frame body position errors
against the reference's forward kinematics; MPJPE = their mean (mm); a clip fails when the mean body
deviation exceeds 0.5 m (the PHC convention).
"""

from __future__ import annotations

import numpy as np

from repro.papers.tvs.humanoid import ROOT_DOFS, Humanoid
from repro.papers.tvs.torque import inverse


def reference_bodies(h: Humanoid, qpos: np.ndarray) -> np.ndarray:
    """World positions (frames, bodies, 3) of every body but the world, by forward kinematics."""
    import mujoco

    data = mujoco.MjData(h.model)
    out = np.empty((len(qpos), h.model.nbody - 1, 3))
    for t, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(h.model, data)
        out[t] = data.xpos[1:]
    return out


def pushes(
    h: Humanoid, frames: int, fps: float, rng: np.random.Generator, cfg: dict
) -> list[tuple[int, int, np.ndarray]]:
    """(start step, body, force) of the clip's random pushes: on bodies of at least ``min_mass_kg`` (a push on a
    finger would only test the integrator), force ~ N(0, force_n^2) per axis."""
    steps = int(frames / fps / h.model.opt.timestep)
    n = rng.poisson(cfg["rate_hz"] * frames / fps)
    heavy = np.flatnonzero(h.model.body_mass >= cfg["min_mass_kg"])
    return [(int(rng.integers(0, steps)), int(rng.choice(heavy)), rng.normal(0, cfg["force_n"], 3)) for _ in range(n)]


def track(h: Humanoid, qpos, qvel, qacc, fps: float, policy: dict, push_list, push_cfg: dict) -> dict:
    """Simulate one policy tracking one clip; per-frame body errors (m) and the failure flag."""
    import mujoco

    m = h.model
    data = mujoco.MjData(m)
    work = mujoco.MjData(m)
    ff = np.array([inverse(h, work, q, v, a) for q, v, a in zip(qpos, qvel, qacc, strict=True)])
    ref_bodies = reference_bodies(h, qpos)
    data.qpos[:], data.qvel[:] = qpos[0], qvel[0]
    dt = m.opt.timestep
    frames = len(qpos)
    steps_per_frame = int(round(1 / (fps * dt)))
    kp, kd = policy["kp"] * h.gear, policy["kd"] * h.gear
    limit = policy["torque_limit"]
    q_idx = m.jnt_qposadr[m.actuator_trnid[:, 0]]
    push_steps = int(push_cfg["duration_s"] / dt)
    errors = np.zeros((frames, m.nbody - 1))
    step = 0
    for t in range(frames):
        mujoco.mj_kinematics(m, data)
        errors[t] = np.linalg.norm(data.xpos[1:] - ref_bodies[t], axis=1)
        nxt = min(t + 1, frames - 1)
        for k in range(steps_per_frame):
            w = k / steps_per_frame  # reference linearly interpolated between frames
            q_ref = (1 - w) * qpos[t] + w * qpos[nxt]
            v_ref = (1 - w) * qvel[t] + w * qvel[nxt]
            f_ref = (1 - w) * ff[t] + w * ff[nxt]
            tau = (
                f_ref[h.act_dof]
                + kp * (q_ref[q_idx] - data.qpos[q_idx])
                + kd * (v_ref[h.act_dof] - data.qvel[h.act_dof])
            )
            data.ctrl[:] = np.clip(tau / h.gear, -limit, limit)
            data.qfrc_applied[:ROOT_DOFS] = f_ref[:ROOT_DOFS]
            data.qpos[:7], data.qvel[:ROOT_DOFS] = qpos[t][:7], qvel[t][:ROOT_DOFS]
            data.xfrc_applied[:] = 0
            for start, body, force in push_list:
                if start <= step < start + push_steps:
                    data.xfrc_applied[body, :3] = force
            mujoco.mj_step(m, data)
            step += 1
    mean_dev = errors.mean(axis=1)
    return {"body_errors": errors, "mpjpe_mm": float(errors.mean() * 1000), "failed": bool(np.any(mean_dev > 0.5))}
