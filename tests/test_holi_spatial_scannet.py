"""The ScanNet v2 reader on files in the published layout (repro.fixtures.scannet, the rehearsal's writer): boxes
paired with instance ids through the vertices (not by row order), cameras moved into the axis-aligned frame,
missing depth as NaN, refused rows counted, and every bad input named in an InputError."""

import shutil

import numpy as np
import pytest

from repro.fixtures import scannet as fixture
from repro.papers.holi_spatial.geometry import backproject
from repro.papers.holi_spatial.scannet import SCANNET_CLASSES, read_scannet_scene
from repro.workflow.io import InputError

NAME = fixture.SCENES[0]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scannet")
    fixture.write_scene(folder, 0, np.random.default_rng(0))
    return folder


@pytest.fixture
def root(written, tmp_path):
    shutil.copytree(written / "scans", tmp_path / "scans")
    return tmp_path


def test_boxes_pair_with_instance_ids_through_the_vertices_not_the_row_order(root):
    scene, report = read_scannet_scene(root, NAME, stride=1, max_frames=100)
    # instance ids 1 (floor), 2 and 4 (walls) have no box row: rows 0..3 are instances 3, 5, 6, 7
    assert scene.obj_id.tolist() == [3, 5, 6, 7]
    assert scene.obj_class == ["table", "chair", "cabinet", "sofa"]
    nyu, lo, hi = fixture.ROOMS[0][2]  # instance 3, the table
    assert nyu == 7 and np.allclose(scene.box_lo[0], lo, atol=1e-5) and np.allclose(scene.box_hi[0], hi, atol=1e-5)
    assert report["box_rows"] == 4 and report["box_rows_refused"] == 0
    assert set(scene.obj_class) <= set(SCANNET_CLASSES)


def test_cameras_are_moved_into_the_boxes_axis_aligned_frame(root):
    """Back-projecting each object's pixels with the aligned cameras lands inside its (aligned) box."""
    scene, _ = read_scannet_scene(root, NAME, stride=1, max_frames=100)
    for oid, lo, hi in zip(scene.obj_id, scene.box_lo, scene.box_hi, strict=True):
        shares = []
        for f in range(len(scene.depth)):
            mask = (scene.instance[f] == oid) & np.isfinite(scene.depth[f])
            if mask.sum() >= 20:
                pts = backproject(scene.depth[f], scene.K, scene.cam2world[f], mask)
                shares.append(np.mean(np.all((pts >= lo - 0.05) & (pts <= hi + 0.05), axis=1)))
        assert shares and np.mean(shares) > 0.9, (oid, shares)
    # the file poses are in the scan frame: without the alignment the same points miss the boxes
    align = fixture.axis_alignment(0)
    assert not np.allclose(np.linalg.inv(align) @ scene.cam2world[0], scene.cam2world[0])


def test_lost_tracking_and_missing_depth_are_counted_and_masked(root):
    scene, report = read_scannet_scene(root, NAME, stride=1, max_frames=100)
    assert report["frames_lost_tracking"] == 1 and report["frames_lost_first"] == [5]
    assert scene.depth.shape[0] == fixture.FRAMES - 1 == report["frames"]
    raw_zero = report["depth_missing_pixels"]
    assert raw_zero > 0 and raw_zero == int(np.isnan(scene.depth).sum())
    assert np.nanmin(scene.depth) > 0
    assert scene.depth.shape[1:] == scene.instance.shape[1:] == scene.rgb.shape[1:3]  # colour resized to depth
    assert len(report["inputs"]) == 6 + 4 * (fixture.FRAMES - 1) + 1  # the lost frame's pose is read too


def test_refused_rows_are_counted_and_too_many_stop_the_reader(root):
    base = root / "scans" / NAME
    boxes = np.load(base / f"{NAME}_bbox.npy")
    bad = np.vstack([boxes, [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 7], [1.0, 1.0, np.nan, 0.5, 0.5, 0.5, 5]])
    np.save(base / f"{NAME}_bbox.npy", bad)
    scene, report = read_scannet_scene(root, NAME, 1, 100, max_refused=0.5)
    assert report["box_rows_refused"] == 2 and len(scene.obj_id) == 4
    assert report["box_rows_refused_first"] == ["row 4: matches no instance's vertices", "row 5: non-finite field"]
    with pytest.raises(InputError, match="2 of 6 rows refused"):
        read_scannet_scene(root, NAME, 1, 100, max_refused=0.05)
    wrong_class = boxes.copy()
    wrong_class[:, 6] = 1  # wall: not a benchmark class
    np.save(base / f"{NAME}_bbox.npy", wrong_class)
    with pytest.raises(InputError, match="4 of 4 rows refused.*class id 1 is not one of the 18"):
        read_scannet_scene(root, NAME, 1, 100)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda b: (b / f"{NAME}.txt").write_text("sceneType = Bathroom\n"), "no axisAlignment line"),
        (lambda b: (b / f"{NAME}.txt").write_text("axisAlignment = 1 0 0\n"), "axisAlignment has 3 numbers"),
        (lambda b: (b / f"{NAME}.txt").unlink(), "meta file with axisAlignment"),
        (lambda b: np.savetxt(b / "pose" / "2.txt", np.eye(3)), "2.txt: expected a 4x4 matrix"),
        (lambda b: np.save(b / f"{NAME}_bbox.npy", np.zeros((2, 6))), r"bbox.npy: expected an \(N, 7\) array"),
        (lambda b: (b / f"{NAME}_vert.npy").unlink(), "vert.npy: missing"),
        (lambda b: np.save(b / f"{NAME}_ins_label.npy", np.zeros(3)), "vertices but 3"),
        (lambda b: (b / "depth" / "3.png").write_bytes(b"not a png"), "3.png: not a readable image"),
        (lambda b: (b / "instance-filt" / "0.png").unlink(), "0.png: missing"),
    ],
)
def test_bad_inputs_name_the_file(root, damage, message):
    damage(root / "scans" / NAME)
    with pytest.raises(InputError, match=message):
        read_scannet_scene(root, NAME, 1, 100)


def test_a_missing_scene_is_named(root):
    with pytest.raises(InputError, match="scene folder not found"):
        read_scannet_scene(root, "scene9999_00", 1, 10)


@pytest.mark.e2e
def test_replacing_one_scannet_file_reruns_exactly_its_downstream_jobs(tmp_path):
    """A finished ScanNet run, one user file replaced (new content): the data stage and what it feeds rerun."""
    import yaml
    from PIL import Image
    from workflow_tools import copy_workflow, scheduled_rules, snakemake

    work = copy_workflow(tmp_path / "wf")
    fixture.write(work / "userdata" / "scannet")
    section = {
        "scannet": {"root": "userdata/scannet", "scenes": list(fixture.SCENES), "frame_stride": 3, "max_frames": 8},
        "fusion": {"voxel": 0.1},
        "perception": {"seeds": [0]},
    }
    (work / "scannet-rerun.yaml").write_text(yaml.safe_dump({"papers": {"holi-spatial": section}}))
    args = ("holi_spatial", "--cores", "2", "--configfile", "config/full.yaml", "scannet-rerun.yaml")
    snakemake(work, *args)
    assert scheduled_rules(work, *args) == {}, "a finished run leaves nothing to do"
    depth = work / "userdata/scannet/scans" / NAME / "depth" / "3.png"
    pixels = np.asarray(Image.open(depth)).copy()
    pixels[0, 0] += 7
    Image.fromarray(pixels).save(depth)
    expected = {f"holi_spatial_{s}": 1 for s in ("data", "curate", "evaluate", "figures")}
    assert scheduled_rules(work, *args) == expected | {"holi_spatial": 1, "provenance": 1}
