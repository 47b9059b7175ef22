"""The Torque Variation Score and the difficulty proxies it is compared with.

Working definition (reconstructed; the paper's exact formula was not located): for frame t with reference
(q, qdot, qddot), draw K perturbations dq_k ~ N(0, eps^2 I) of the hinge joint angles, and compute with MuJoCo's
inverse dynamics dtau_k = ID(q + dq_k, qdot, qddot) - ID(q, qdot, qddot) on the actuated joints, each joint's
torque divided by its actuator gear (units differ across joints). Frame score = mean_k ||dtau_k|| / ||dq_k||;
motion TVS = mean over frames (the 90th percentile is also kept). The free root's residual force is excluded
(it dominates torque norms); a variant including it is recorded.
"""

from __future__ import annotations

import numpy as np

from repro.papers.tvs.humanoid import ROOT_DOFS, Humanoid


def inverse(h: Humanoid, data, qpos: np.ndarray, qvel: np.ndarray, qacc: np.ndarray) -> np.ndarray:
    import mujoco

    data.qpos[:], data.qvel[:], data.qacc[:] = qpos, qvel, qacc
    mujoco.mj_inverse(h.model, data)
    return data.qfrc_inverse.copy()


def frame_responses(h: Humanoid, data, qpos, qvel, qacc, directions: np.ndarray, eps: float) -> dict:
    """Torque responses of one frame to perturbations eps * directions (K, hinges)."""
    base = inverse(h, data, qpos, qvel, qacc)
    resp, resp_root = [], []
    for u in directions:
        q = qpos.copy()
        q[h.hinge_qpos] += eps * u
        d_tau = inverse(h, data, q, qvel, qacc) - base
        resp.append(d_tau[h.hinge_dof] / h.dof_gear)
        resp_root.append(d_tau[:ROOT_DOFS])
    return {"hinge": np.array(resp), "root": np.array(resp_root), "base": base}


def clip_scores(h: Humanoid, qpos, qvel, qacc, rng: np.random.Generator, cfg: dict) -> dict:
    """Per-frame TVS (with and without the root residual) and the MDS components of one clip."""
    import mujoco

    data = mujoco.MjData(h.model)
    eps, k = cfg["eps"], cfg["perturbations"]
    frames = np.arange(0, len(qpos), cfg["frame_stride"])
    tvs, tvs_root, spectral, variance = [], [], [], []
    for t in frames:
        u = rng.standard_normal((k, len(h.hinge_qpos)))
        r = frame_responses(h, data, qpos[t], qvel[t], qacc[t], u, eps)
        norms = np.linalg.norm(eps * u, axis=1)
        tvs.append(float(np.mean(np.linalg.norm(r["hinge"], axis=1) / norms)))
        full = np.concatenate([r["hinge"], r["root"] / np.max(h.gear)], axis=1)
        tvs_root.append(float(np.mean(np.linalg.norm(full, axis=1) / norms)))
        sv = np.linalg.svd(r["hinge"] / norms[:, None], compute_uv=False)
        spectral.append(float(np.sum(np.log(sv + 1e-12))))
        variance.append(float(np.sum(np.log(np.var(r["hinge"] / norms[:, None], axis=0) + 1e-12))))
    tvs = np.array(tvs)
    seg = cfg["segment_frames"] // cfg["frame_stride"]
    segment_means = [tvs[i : i + seg].mean() for i in range(0, len(tvs), seg) if len(tvs[i : i + seg])]
    return {
        "frames": frames.tolist(),
        "frame_tvs": tvs.tolist(),
        "tvs": float(np.mean(tvs)),
        "tvs_p90": float(np.percentile(tvs, 90)),
        "tvs_with_root": float(np.mean(tvs_root)),
        "mds_spectral": float(np.mean(spectral)),
        "mds_variance": float(np.mean(variance)),
        "mds_segment": float(np.std(segment_means)),
    }


def consistency(h: Humanoid, qpos, qvel, qacc, rng: np.random.Generator, eps: float, k: int) -> dict:
    """The brief's exactness and consistency checks on one frame: the unperturbed difference, the frame score at eps
    against eps/2 along the same directions, and the frame score against the one mjd_inverseFD's Jacobian gives
    for the same directions (mean ||J u|| / ||u||)."""
    import mujoco

    data = mujoco.MjData(h.model)
    u = rng.standard_normal((k, len(h.hinge_qpos)))
    zero = frame_responses(h, data, qpos, qvel, qacc, np.zeros((1, len(h.hinge_qpos))), eps)["hinge"]
    full = frame_responses(h, data, qpos, qvel, qacc, u, eps)["hinge"]
    half = frame_responses(h, data, qpos, qvel, qacc, u, eps / 2)["hinge"]
    ratio_full = np.linalg.norm(full, axis=1) / (eps * np.linalg.norm(u, axis=1))
    ratio_half = np.linalg.norm(half, axis=1) / (eps / 2 * np.linalg.norm(u, axis=1))
    data.qpos[:], data.qvel[:], data.qacc[:] = qpos, qvel, qacc
    nv = h.model.nv
    dfdq = np.zeros((nv, nv))
    mujoco.mjd_inverseFD(h.model, data, 1e-6, 0, dfdq, None, None, None, None, None, None)
    # MuJoCo's derivative matrices are transposed: DfDq[i, j] = d f_j / d q_i
    jac = dfdq.T[np.ix_(h.hinge_dof, h.hinge_dof)] / h.dof_gear[:, None]
    ratio_jac = np.linalg.norm(u @ jac.T, axis=1) / np.linalg.norm(u, axis=1)
    return {
        "zero_perturbation_max_abs": float(np.max(np.abs(zero))),
        "eps_half_rel_diff": float(abs(ratio_full.mean() - ratio_half.mean()) / ratio_full.mean()),
        "jacobian_rel_diff": float(abs(ratio_full.mean() - ratio_jac.mean()) / ratio_jac.mean()),
    }


def proxies(h: Humanoid, qvel: np.ndarray, qacc: np.ndarray, fps: float) -> dict:
    """Competing difficulty proxies: mean joint speed, acceleration and jerk (hinge joints)."""
    v, a = qvel[:, h.hinge_dof], qacc[:, h.hinge_dof]
    jerk = np.gradient(a, 1.0 / fps, axis=0)
    return {
        "speed": float(np.mean(np.linalg.norm(v, axis=1))),
        "acceleration": float(np.mean(np.linalg.norm(a, axis=1))),
        "jerk": float(np.mean(np.linalg.norm(jerk, axis=1))),
    }


def frame_acceleration(h: Humanoid, qacc: np.ndarray) -> np.ndarray:
    """Flaw-detection baseline: hinge acceleration magnitude per frame."""
    return np.linalg.norm(qacc[:, h.hinge_dof], axis=1)
