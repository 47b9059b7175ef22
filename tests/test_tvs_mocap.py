"""Full-scale motion readers on AMASS and BVH files in their published layouts (repro.fixtures.amass and
repro.fixtures.bvh, the rehearsal's writers): windows chosen round-robin up to ``clips``, injected flaws with
their masks, refused files counted, and every bad input named in an InputError."""

import shutil

import numpy as np
import pytest
from tvs_model import write_package

from repro.fixtures import amass, bvh
from repro.papers.tvs.humanoid import load
from repro.papers.tvs.mocap import choose_windows, convert_files, read_amass, read_bvh, retarget, windows_of
from repro.workflow.io import InputError

FLAWS = {"share": 0.5, "segment_frames": [4, 8], "teleport_rad": 0.4, "jitter_rad": 0.08}


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    return str(write_package(tmp_path_factory.mktemp("dmc")))


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("mocap")
    amass.write(root / "amass")
    bvh.write(root / "bvh")
    return root


@pytest.fixture
def root(written, tmp_path):
    shutil.copytree(written, tmp_path / "mocap")
    return tmp_path / "mocap"


def settings(root, source="amass", clips=12, frames=60, **mocap):
    folder, pattern = (root / "amass", "**/*_poses.npz") if source == "amass" else (root / "bvh", "**/*.bvh")
    return {
        "source": source,
        "timestep": 0.002,
        "fps": 30.0,
        "frames": frames,
        "clips": clips,
        "motion_seed": 0,
        "flaws": FLAWS,
        "mocap": {"root": str(folder), "pattern": pattern, "max_refused": 0.1} | mocap,
    }


def test_amass_clips_are_windows_of_every_file_round_robin_with_injected_flaws(root, package):
    arrays, report = convert_files(package, settings(root))
    assert arrays["qpos"].shape[:2] == (12, 60) and report["windows_used"] == 12
    assert report["files"] == 16 and report["files_refused"] == 0 and report["windows_available"] == 100
    # shape.npz files do not match the pattern; the 12 clips are the first windows of the first 12 files
    assert [str(f).split("#")[0] for f in arrays["family"]] == [
        f"CMU/{s}/{c}_poses.npz" for s, c, _, _ in sorted(amass.CLIPS)[:12]
    ]
    flawed = arrays["flaw"] != "none"
    assert flawed.sum() == 6 and np.all(arrays["flaw_mask"][flawed].any(axis=1))
    assert not arrays["flaw_mask"][~flawed].any()
    assert len(report["inputs"]) == 16


def test_windows_retarget_the_clip_at_their_own_time(root, package):
    h = load(package, 0.002)
    clip = read_amass(root / "amass/CMU/01/01_01_poses.npz")
    first, second = retarget(h, clip, 30.0, 60, start=0), retarget(h, clip, 30.0, 60, start=60)
    k = h.hinge_qpos[h.joint_names.index("lfemurrx")]
    t = (60 + np.arange(60)) / 30.0
    expected = np.clip(np.interp(t, np.arange(len(clip["trans"])) / 120.0, clip["bones"]["lfemur"][:, 2]), -2, 2)
    np.testing.assert_allclose(second[:, k], expected)
    assert not np.allclose(first[:, k], second[:, k])
    assert second[0, 0] == 0 and second[0, 1] == 0  # the root starts each window at the origin


def test_window_counts_and_round_robin_choice():
    assert windows_of(780, 120.0, 30.0, 60) == 3 and windows_of(540, 120.0, 30.0, 60) == 2
    assert windows_of(100, 120.0, 30.0, 60) == 0
    assert choose_windows([3, 1, 2], 5) == [(0, 0), (1, 0), (2, 0), (0, 1), (2, 1)]


def test_bvh_files_are_read_by_channel_name_in_z_up_metres(root, package):
    clip = read_bvh(root / "bvh/01/01_01.bvh")
    assert clip["fps"] == pytest.approx(120.0)
    assert clip["trans"][0, 2] == pytest.approx(0.9)  # Y up 90 cm -> z 0.9 m
    assert set(clip["bones"]) >= {"lfemur", "rtibia", "thorax", "head", "lhumerus"}
    arrays, report = convert_files(package, settings(root, "bvh", clips=6))
    assert arrays["qpos"].shape[:2] == (6, 60) and report["files"] == 3


def test_refused_files_are_counted_and_too_many_stop_the_run(root, package):
    folder = root / "amass/CMU/01"
    z = dict(np.load(folder / "01_01_poses.npz"))
    np.savez(folder / "01_09_poses.npz", **(z | {"poses": z["poses"][:100], "trans": z["trans"][:100]}))  # 0.8 s
    nan = z["poses"].copy()
    nan[10, 5] = np.nan
    np.savez(folder / "01_10_poses.npz", **(z | {"poses": nan}))
    arrays, report = convert_files(package, settings(root, clips=10, max_refused=0.5))
    assert report["files"] == 18 and report["files_refused"] == 2
    assert "01_09_poses.npz: shorter than one window" in report["files_refused_first"][0]
    assert "01_10_poses.npz: 1 frames with non-finite poses" in report["files_refused_first"][1]
    with pytest.raises(InputError, match="2 of 18 files refused"):
        convert_files(package, settings(root, clips=10))


def test_too_few_windows_and_missing_folders_are_named(root, package):
    with pytest.raises(InputError, match="100 windows of 60 frames in 16 files; clips asks for 200"):
        convert_files(package, settings(root, clips=200))
    with pytest.raises(InputError, match="no file matches"):
        convert_files(package, settings(root, pattern="**/*.c3d"))
    with pytest.raises(InputError, match="mocap folder not found"):
        convert_files(package, settings(root) | {"mocap": {"root": str(root / "nowhere"), "pattern": "*"}})


def test_amass_bad_inputs(tmp_path):
    np.savez(tmp_path / "x.npz", poses=np.zeros((5, 156)))
    with pytest.raises(InputError, match=r"missing \['trans', 'mocap_framerate'\]"):
        read_amass(tmp_path / "x.npz")
    np.savez(tmp_path / "y.npz", poses=np.zeros((5, 10)), trans=np.zeros((5, 3)), mocap_framerate=30.0)
    with pytest.raises(InputError, match="expected poses"):
        read_amass(tmp_path / "y.npz")
    (tmp_path / "z.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not a readable npz"):
        read_amass(tmp_path / "z.npz")


def test_bvh_bad_inputs(root, tmp_path):
    path = tmp_path / "bad.bvh"
    path.write_text("nothing here")
    with pytest.raises(InputError, match="not a BVH file"):
        read_bvh(path)
    text = (root / "bvh/01/01_01.bvh").read_text()
    path.write_text(text.replace("Frame Time:", "Frame Tme"))
    with pytest.raises(InputError, match="malformed MOTION header"):
        read_bvh(path)


def test_a_truncated_bvh_is_refused_not_misread(root, package):
    path = root / "bvh/02/02_01.bvh"
    path.write_text(path.read_text()[:-40])  # cut inside the last frame's line
    with pytest.raises(InputError, match="1 of 3 files refused.*1 malformed"):
        convert_files(package, settings(root, "bvh", clips=4))


@pytest.mark.e2e
def test_replacing_one_amass_file_reruns_exactly_its_downstream_jobs(tmp_path):
    """A finished AMASS run, one clip replaced (new content): the data stage and what it feeds rerun."""
    import yaml
    from workflow_tools import copy_workflow, scheduled_rules, snakemake

    work = copy_workflow(tmp_path / "wf")
    amass.write(work / "userdata" / "amass")
    section = {"mocap": {"root": "userdata/amass"}, "clips": 6, "frames": 40, "score": {"perturbations": 4}}
    (work / "amass-rerun.yaml").write_text(yaml.safe_dump({"papers": {"tvs": section}}))
    args = ("tvs", "--cores", "2", "--configfile", "config/full.yaml", "amass-rerun.yaml")
    snakemake(work, *args)
    assert scheduled_rules(work, *args) == {}, "a finished run leaves nothing to do"
    clip = work / "userdata/amass/CMU/02/02_01_poses.npz"
    z = dict(np.load(clip))
    np.savez(clip, **(z | {"poses": z["poses"] * 1.01}))
    expected = {f"tvs_{s}": 1 for s in ("data", "score", "track", "evaluate", "figures")}
    assert scheduled_rules(work, *args) == expected | {"tvs": 1, "provenance": 1}
