"""TVS: inverse-dynamics score against an analytic pendulum, the brief's consistency checks, motions, flaws,
tracking and the evaluation helpers."""

import numpy as np
import pytest
from tvs_model import write_package

from repro.papers.tvs import control, motions, torque
from repro.papers.tvs.evaluate import dsje, mid
from repro.papers.tvs.flaws import auroc, segments
from repro.papers.tvs.humanoid import load
from repro.papers.tvs.store import read_motions, write_motions
from repro.workflow.io import InputError

MOTION = {"amplitude": [0.05, 0.4], "frequency": [0.3, 1.2], "baseline": 0.02}
SCORE = {"eps": 0.01, "perturbations": 6, "frame_stride": 1, "segment_frames": 5}


@pytest.fixture(scope="module")
def humanoid(tmp_path_factory):
    return load(write_package(tmp_path_factory.mktemp("dmc")), 0.002)


def clip(h, level=0.8, frames=40, seed=0):
    q = motions.generate(h, "sway", level, frames, 30.0, np.random.default_rng(seed), MOTION)
    v, a = motions.derivatives(h, q, 30.0)
    return q, v, a


def test_missing_member_is_named(tmp_path):
    with pytest.raises(InputError, match="humanoid_CMU.xml: missing"):
        load(tmp_path, 0.002)


def test_frame_score_matches_gravity_torque_derivative_of_a_pendulum(tmp_path):
    xml = """<mujoco><include file="./common/skybox.xml"/><include file="./common/visual.xml"/>
      <include file="./common/materials.xml"/><compiler angle="radian"/><worldbody><body name="root" pos="0 0 1"><freejoint/>
      <geom type="sphere" size="0.1" mass="5"/><body name="lhumerus"><joint name="lhumerusrx" axis="1 0 0"
      limited="true" range="-3 3"/><geom type="sphere" pos="0 0 -0.5" size="0.01" mass="2"/></body></body>
      </worldbody><actuator><motor joint="lhumerusrx" gear="10"/></actuator></mujoco>"""
    h = load(write_package(tmp_path, xml), 0.002)
    qpos = h.model.qpos0.copy()
    qpos[h.hinge_qpos[0]] = 0.7
    zeros = np.zeros(h.model.nv)
    sc = torque.clip_scores(h, qpos[None], zeros[None], zeros[None], np.random.default_rng(0), SCORE)
    # point mass 2 kg at 0.5 m: tau = m g r sin(q), d tau / dq = m g r cos(q); divided by the gear
    expected = 2 * 9.81 * 0.5 * np.cos(0.7) / 10
    assert sc["frame_tvs"][0] == pytest.approx(expected, rel=0.02)


def test_consistency_checks_hold(humanoid):
    q, v, a = clip(humanoid)
    c = torque.consistency(humanoid, q[20], v[20], a[20], np.random.default_rng(1), 0.02, 8)
    assert c["zero_perturbation_max_abs"] == 0.0
    assert c["eps_half_rel_diff"] < 0.05 and c["jacobian_rel_diff"] < 0.05


def test_scores_repeat_and_grow_with_difficulty(humanoid):
    easy, hard = clip(humanoid, 0.0), clip(humanoid, 1.0)
    a = torque.clip_scores(humanoid, *hard, np.random.default_rng(3), SCORE)
    b = torque.clip_scores(humanoid, *hard, np.random.default_rng(3), SCORE)
    assert a == b
    assert a["tvs"] > torque.clip_scores(humanoid, *easy, np.random.default_rng(3), SCORE)["tvs"]


def test_finite_differences_of_a_sinusoid(humanoid):
    fps, f = 60.0, 0.5
    t = np.arange(120) / fps
    qpos = np.tile(humanoid.model.qpos0, (120, 1))
    qpos[:, humanoid.hinge_qpos[0]] = 0.3 * np.sin(2 * np.pi * f * t)
    v, a = motions.derivatives(humanoid, qpos, fps)
    w = 2 * np.pi * f
    dof = humanoid.hinge_dof[0]
    assert np.allclose(v[5:-5, dof], 0.3 * w * np.cos(w * t[5:-5]), rtol=0, atol=2e-3)
    assert np.allclose(a[5:-5, dof], -0.3 * w**2 * np.sin(w * t[5:-5]), rtol=0, atol=2e-2)


def test_flaw_changes_only_its_segment(humanoid):
    q, _, _ = clip(humanoid, 0.5, 60)
    cfg = {"segment_frames": [4, 8], "teleport_rad": 0.4, "jitter_rad": 0.08}
    flawed, mask, kind = motions.inject(humanoid, q, np.random.default_rng(5), cfg)
    changed = np.any(flawed != q, axis=1)
    assert kind in motions.FLAWS and 4 <= mask.sum() <= 8 and not np.any(changed & ~mask) and changed.any()


def test_tracking_smooth_motion_is_accurate_and_pushes_repeat(humanoid):
    q, v, a = clip(humanoid, 0.2, 30)
    cfg = {"rate_hz": 2.0, "force_n": 20.0, "duration_s": 0.05, "min_mass_kg": 1.0}
    p1 = control.pushes(humanoid, 30, 30.0, np.random.default_rng(0), cfg)
    p2 = control.pushes(humanoid, 30, 30.0, np.random.default_rng(0), cfg)
    assert all(a_[0] == b_[0] and a_[1] == b_[1] and np.array_equal(a_[2], b_[2]) for a_, b_ in zip(p1, p2))
    strong = control.track(humanoid, q, v, a, 30.0, {"kp": 3.0, "kd": 0.1, "torque_limit": 1.0}, [], cfg)
    weak = control.track(humanoid, q, v, a, 30.0, {"kp": 0.2, "kd": 0.01, "torque_limit": 0.1}, p1, cfg)
    assert strong["mpjpe_mm"] < 20 and not strong["failed"] and weak["mpjpe_mm"] > strong["mpjpe_mm"]


def test_motion_store_round_trip_and_bad_shapes(humanoid, tmp_path):
    q, v, a = clip(humanoid, 0.3, 30)
    arrays = {
        "qpos": q[None],
        "qvel": v[None],
        "qacc": a[None],
        "flaw_mask": np.zeros((1, 30), bool),
        "family": np.array(["sway"]),
        "level": np.array([0.3]),
        "flaw": np.array(["none"]),
        "fps": 30.0,
        "model_xml": "x",
    }
    write_motions(tmp_path / "m.npz", **arrays)
    assert np.array_equal(read_motions(tmp_path / "m.npz", humanoid.model.nq, humanoid.model.nv)["qpos"], q[None])
    with pytest.raises(InputError, match="expected qpos"):
        read_motions(tmp_path / "m.npz", humanoid.model.nq + 1, humanoid.model.nv)


def test_auroc_matches_sklearn():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.random(200) < 0.3
    x = rng.normal(size=200) + y + np.round(rng.random(200), 1)
    assert auroc(y, x) == pytest.approx(roc_auc_score(y, x))


def test_segments_label_and_score():
    mask = np.zeros((1, 12), bool)
    mask[0, 7] = True
    seg = segments([np.arange(12.0)], [np.ones(12)], [np.arange(12)], mask, 6)
    assert seg["label"] == [False, True] and seg["tvs"] == [5.0, 11.0] and seg["clip"] == [0, 0]


def test_dsje_and_mid_by_hand():
    tvs = np.array([1.0, 2, 3, 4, 5, 6])
    errors = np.array([[1.0, 2], [1, 2], [3, 4], [3, 4], [5, 6], [5, 6]])
    out = dsje(tvs, errors, np.array([0, 2]), 3, ["legs", "spine", "arms"])
    assert out["all"] == [1.5, 3.5, 5.5] and out["legs"] == [1, 3, 5] and out["arms"] == [2, 4, 6]
    assert "spine" not in out  # no body of that group
    failed = np.array([False, False, False, True, True, True])
    m = mid(tvs, failed, 3, 0.5)
    assert m["success"] == [1.0, 0.5, 0.0] and m["mid"] == pytest.approx(np.quantile(tvs, 2 / 3))
