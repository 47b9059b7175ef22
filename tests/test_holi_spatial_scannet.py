"""The ScanNet v2 frame reader on tiny files in the exported layout, and its errors on bad inputs."""

import numpy as np
import pytest
from PIL import Image

from repro.papers.holi_spatial.scannet import read_scannet_scene
from repro.workflow.io import InputError


def write_scene(root, name="scene0000_00", frames=3):
    base = root / "scans" / name
    for sub in ("color", "depth", "pose", "intrinsic", "instance-filt"):
        (base / sub).mkdir(parents=True)
    K = np.eye(4)
    K[0, 0] = K[1, 1] = 20.0
    K[0, 2], K[1, 2] = 8.0, 6.0
    np.savetxt(base / "intrinsic" / "intrinsic_depth.txt", K)
    for i in range(frames):
        Image.fromarray(np.full((24, 32, 3), 100 + i, dtype=np.uint8)).save(base / "color" / f"{i}.jpg")
        depth = np.full((12, 16), 1500, dtype=np.uint16)
        depth[0, 0] = 0  # a hole
        Image.fromarray(depth).save(base / "depth" / f"{i}.png")
        ids = np.zeros((24, 32), dtype=np.uint8)
        ids[8:16, 8:16] = 1
        Image.fromarray(ids).save(base / "instance-filt" / f"{i}.png")
        pose = np.eye(4)
        pose[0, 3] = i
        if i == 1:
            pose[:] = -np.inf  # lost tracking
        np.savetxt(base / "pose" / f"{i}.txt", pose)
    np.save(base / f"{name}_bbox.npy", np.array([[1.0, 2.0, 0.5, 0.4, 0.4, 1.0, 5]]))
    return base


def test_reads_frames_poses_boxes(tmp_path):
    write_scene(tmp_path)
    scene = read_scannet_scene(tmp_path, "scene0000_00", stride=1, max_frames=10)
    assert scene.depth.shape == (2, 12, 16) and scene.rgb.shape == (2, 12, 16, 3)  # frame 1 has no pose
    assert np.isnan(scene.depth[0, 0, 0]) and scene.depth[0, 5, 5] == pytest.approx(1.5)
    assert scene.cam2world[1][0, 3] == 2 and scene.K[0, 0] == 20
    assert scene.instance[0, 4:8, 4:8].min() == 1 and scene.instance[0, 0, 0] == -1  # resized to the depth size
    assert np.allclose(scene.box_lo[0], [0.8, 1.8, 0.0]) and scene.obj_class == ["class_5"]


def test_bad_inputs_name_the_file(tmp_path):
    base = write_scene(tmp_path)
    with pytest.raises(InputError, match="scene folder not found"):
        read_scannet_scene(tmp_path, "scene9999_00", 1, 10)
    np.savetxt(base / "pose" / "2.txt", np.eye(3))
    with pytest.raises(InputError, match="2.txt: expected a 4x4 matrix"):
        read_scannet_scene(tmp_path, "scene0000_00", 1, 10)
    np.save(base / "scene0000_00_bbox.npy", np.zeros((2, 6)))
    with pytest.raises(InputError, match="bbox.npy: expected an \\(N, 7\\) array"):
        read_scannet_scene(tmp_path, "scene0000_00", 1, 10)
    (base / "scene0000_00_bbox.npy").unlink()
    with pytest.raises(InputError, match="bbox.npy: missing"):
        read_scannet_scene(tmp_path, "scene0000_00", 1, 10)
