"""Focusing's mesh-folder reader on the Objaverse-layout fixture: ids, refused meshes counted and named, the
refusal limit, clear errors; and (e2e) replacing one mesh of a finished run reruns exactly what it feeds."""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace as NS

import pytest
import yaml
from workflow_tools import commit_copy, copy_workflow, scheduled_rules, snakemake

from repro.fixtures import objaverse_obj
from repro.papers.focusing import data
from repro.workflow.io import InputError, sha256

SHAPES = {
    "source": "folder",
    "test_fraction": 0.25,
    "max_bad_fraction": 0.2,
    "extent": 0.7,
    "views": 2,
    "image": 8,
    "fov_deg": 50,
    "camera_radius": 3.0,
    "surface_points": 200,
    "base_cells": 4,
    "band_cells": 1.0,
    "margin_cells": 0.5,
    "zoom_pad": 0.05,
    "section_splits": [1, 2],
}


def run_data(tmp_path: Path, folder: Path, **overrides):
    out = NS(shapes=str(tmp_path / "shapes"), manifest=str(tmp_path / "manifest.json"))
    shapes = SHAPES | {"mesh_dir": str(folder)} | overrides
    data.main(NS(input=NS(), output=out, params=NS(settings={"data_seed": 0, "shapes": shapes, "fine_per_cell": 4})))
    return json.loads(Path(out.manifest).read_text())


def small_folder(tmp_path: Path, count: int = 8) -> Path:
    full = tmp_path / "objaverse"
    objaverse_obj.write(full)
    keep = sorted(full.rglob("*.obj"))[:count]
    folder = tmp_path / "subset"
    for path in keep:
        target = folder / path.relative_to(full)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    return folder


def test_fixture_is_in_the_objaverse_layout(tmp_path):
    files = objaverse_obj.write(tmp_path)
    objs = [p for p in files if p.suffix == ".obj"]
    assert len(objs) == objaverse_obj.OBJECTS
    assert {p.parent.name for p in objs} == set(objaverse_obj.FOLDERS)
    assert all(len(p.stem) == 32 and int(p.stem, 16) >= 0 for p in objs)
    text = objs[0].read_text()
    assert f"mtllib {objs[0].stem}.mtl" in text and "\nvn " in text and "\nusemtl " in text
    assert (objs[0].parent / f"{objs[0].stem}.mtl").is_file()


def test_reader_names_ids_records_files_and_splits_by_path(tmp_path):
    folder = small_folder(tmp_path)
    manifest = run_data(tmp_path, folder)
    objs = sorted(folder.rglob("*.obj"), key=lambda p: str(p.relative_to(folder)))
    rows = manifest["shapes"]
    assert [r["name"] for r in rows] == [p.stem for p in objs]
    assert [r["split"] for r in rows] == ["train"] * 6 + ["test"] * 2
    assert rows[0]["sha256"] == sha256(objs[0]) and rows[0]["bytes"] == objs[0].stat().st_size
    assert manifest["refused"] == {"count": 0, "of": 8, "first": []}


def test_shapenet_names_come_from_the_id_folder(tmp_path):
    folder = small_folder(tmp_path, 2)
    objs = sorted(folder.rglob("*.obj"))
    shutil.copy(objs[0], folder / "chair01.obj")
    (folder / "cat" / "abc" / "models").mkdir(parents=True)
    shutil.copy(objs[1], folder / "cat" / "abc" / "models" / "model_normalized.obj")
    names = [n for n, _ in data.mesh_files(None, SHAPES | {"mesh_dir": str(folder)})["train"]]
    names += [n for n, _ in data.mesh_files(None, SHAPES | {"mesh_dir": str(folder)})["test"]]
    assert "abc" in names and "chair01" in names


def test_refused_meshes_are_counted_named_and_bounded(tmp_path):
    folder = small_folder(tmp_path)
    broken = sorted(folder.rglob("*.obj"))[1]
    broken.write_text("v 0 0 0\nv 1 0 0\nf 1 2 9\n")
    manifest = run_data(tmp_path, folder)
    assert manifest["refused"]["count"] == 1 and manifest["refused"]["first"][0]["name"] == broken.stem
    assert "missing vertex" in manifest["refused"]["first"][0]["problem"]
    assert broken.stem not in [r["name"] for r in manifest["shapes"]]
    second = sorted(folder.rglob("*.obj"))[2]
    second.write_text("# exported nothing\n")
    with pytest.raises(InputError, match=r"2 of 8 meshes refused.*no vertices"):
        run_data(tmp_path, folder, max_bad_fraction=0.2)


def test_missing_folder_and_duplicate_ids_are_named(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        data.mesh_files(None, SHAPES | {"mesh_dir": str(tmp_path / "nowhere")})
    folder = small_folder(tmp_path, 2)
    obj = sorted(folder.rglob("*.obj"))[0]
    (folder / "other").mkdir()
    shutil.copy(obj, folder / "other" / obj.name)
    with pytest.raises(InputError, match="share an id"):
        data.mesh_files(None, SHAPES | {"mesh_dir": str(folder)})


@pytest.mark.e2e
def test_replacing_one_mesh_reruns_exactly_its_downstream_jobs(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    objaverse_obj.write(work / "data/focusing/objaverse_obj")
    overlay = work / "config/test-focusing.yaml"
    rehearsal = yaml.safe_load((work / "config/rehearsal.yaml").read_text())["papers"]["focusing"]
    rehearsal["shapes"]["mesh_dir"] = "data/focusing/objaverse_obj"
    overlay.write_text(yaml.safe_dump({"papers": {"focusing": rehearsal}}))
    commit_copy(work)
    args = ("focusing", "--cores", "2", "--configfile", "config/full.yaml", str(overlay))
    snakemake(work, *args, timeout=1800)
    assert scheduled_rules(work, *args) == {}
    victim = sorted((work / "data/focusing/objaverse_obj").rglob("*.obj"))[3]
    victim.write_text(victim.read_text() + "# re-exported\n")
    jobs = scheduled_rules(work, *args)
    assert jobs == {
        "focusing_data": 1,
        "focusing_train": 2,
        "focusing_evaluate": 1,
        "focusing_figures": 1,
        "provenance": 1,
        "focusing": 1,
    }
