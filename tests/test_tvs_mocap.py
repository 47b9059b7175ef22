"""Full-scale motion readers on tiny AMASS and BVH files in their real layouts, and their errors."""

import numpy as np
import pytest
from tvs_model import write_package

from repro.papers.tvs.humanoid import load
from repro.papers.tvs.mocap import convert_files, read_amass, read_bvh, retarget
from repro.workflow.io import InputError

BVH = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT LeftUpLeg
  {
    OFFSET 10 0 0
    CHANNELS 3 Zrotation Yrotation Xrotation
    End Site
    {
      OFFSET 0 -40 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.1
0 90 0 0 0 0 10 0 30
1 90 0 0 0 0 20 0 45
2 90 0 0 0 0 30 0 60
"""


def test_bvh_reader(tmp_path):
    path = tmp_path / "clip.bvh"
    path.write_text(BVH)
    clip = read_bvh(path)
    assert clip["fps"] == pytest.approx(10.0)
    assert np.allclose(clip["trans"][:, 0], [0, 0.01, 0.02])  # cm -> m
    assert np.allclose(np.degrees(clip["bones"]["lfemur"][:, 2]), [30, 45, 60])  # x rotation in z, y, x order


def test_bvh_bad_inputs(tmp_path):
    path = tmp_path / "bad.bvh"
    path.write_text("nothing here")
    with pytest.raises(InputError, match="not a BVH file"):
        read_bvh(path)
    path.write_text(BVH.replace("2 90 0 0 0 0 30 0 60\n", ""))
    with pytest.raises(InputError, match="expected 3 frames of 9 channels"):
        read_bvh(path)


def test_amass_reader_and_retarget(tmp_path):
    poses = np.zeros((20, 156))
    poses[:, 3] = 0.5  # left hip (SMPL joint 1): rotation about x
    np.savez(tmp_path / "clip_poses.npz", poses=poses, trans=np.zeros((20, 3)), mocap_framerate=60.0)
    clip = read_amass(tmp_path / "clip_poses.npz")
    assert np.allclose(clip["bones"]["lfemur"][:, 2], 0.5)
    h = load(write_package(tmp_path / "dmc"), 0.002)
    qpos = retarget(h, clip, 30.0, 8)
    assert np.allclose(qpos[:, h.hinge_qpos[h.joint_names.index("lfemurrx")]], 0.5)
    s = {
        "source": "amass",
        "timestep": 0.002,
        "fps": 30.0,
        "frames": 8,
        "mocap": {"files": [str(tmp_path / "clip_poses.npz")]},
    }
    arrays = convert_files(str(tmp_path / "dmc"), s)
    assert arrays["qpos"].shape == (1, 8, h.model.nq) and not arrays["flaw_mask"].any()
    with pytest.raises(InputError, match="shorter"):
        retarget(h, clip, 30.0, 40)


def test_amass_bad_inputs(tmp_path):
    np.savez(tmp_path / "x.npz", poses=np.zeros((5, 156)))
    with pytest.raises(InputError, match=r"missing \['trans', 'mocap_framerate'\]"):
        read_amass(tmp_path / "x.npz")
    np.savez(tmp_path / "y.npz", poses=np.zeros((5, 10)), trans=np.zeros((5, 3)), mocap_framerate=30.0)
    with pytest.raises(InputError, match="expected poses"):
        read_amass(tmp_path / "y.npz")
