"""CoD-Lite's image readers on the Kodak and CLIC fixtures: whole test images in both orientations, crops
streamed to the chunked store and read back by chunks, refused files counted and named, clear errors; and
(e2e) replacing one Kodak image of a finished run reruns exactly what it feeds."""

import json
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest
import yaml
import zarr
from workflow_tools import commit_copy, copy_workflow, scheduled_rules, snakemake

from repro.fixtures import clic, kodak
from repro.papers.cod_lite import data
from repro.papers.cod_lite.test_images import load_test
from repro.workflow.io import InputError, sha256

IMAGES = {
    "source": "folder",
    "max_bad_fraction": 0.1,
    "train_short_side": 64,
    "crop": 32,
    "crops": 50,
    "chunk_crops": 16,
    "test_short_side": None,
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("cod")
    kodak.write(root / "kodak")
    clic.write(root / "clic")
    return root


def run_data(tmp_path, folders, **overrides):
    out = NS(
        crops=str(tmp_path / "crops.zarr"), test=str(tmp_path / "test.npz"), manifest=str(tmp_path / "manifest.json")
    )
    images = IMAGES | {"train_dir": str(folders / "clic/train"), "test_dir": str(folders / "kodak")} | overrides
    data.main(NS(input=NS(), output=out, params=NS(settings={"data_seed": 0, "images": images})))
    return out, json.loads(Path(out.manifest).read_text())


def test_kodak_images_stay_whole_in_both_orientations(tmp_path, folders):
    out, manifest = run_data(tmp_path, folders)
    tests = load_test(out.test)
    assert list(tests) == [f"kodim{i:02d}" for i in range(1, 25)]
    assert tests["kodim01"].shape == (512, 768, 3) and tests["kodim04"].shape == (768, 512, 3)
    row = next(r for r in manifest["images"] if r["image_id"] == "kodim01")
    assert row["sha256"] == sha256(folders / "kodak/kodim01.png") and (row["height"], row["width"]) == (512, 768)
    assert manifest["refused"]["count"] == 0


def test_crops_are_streamed_to_a_chunked_store_and_spread_over_images(tmp_path, folders):
    out, _ = run_data(tmp_path, folders)
    store = zarr.open_group(out.crops, mode="r")
    crops = store["crops"]
    assert crops.shape == (50, 32, 32, 3) and crops.chunks == (16, 32, 32, 3) and crops.dtype == np.uint8
    assert store.attrs["count"] == 50
    values = np.asarray(crops)
    assert len({v.tobytes() for v in values}) == 50  # random positions, no repeats
    from repro.papers.cod_lite.train import CropStore, to_uint8

    seen = [b[0] for b in CropStore(out.crops).batches(8, 0, 2, "cpu")(0)]
    assert sum(len(b) for b in seen) == 50 and len({tuple(b.shape) for b in seen[:-1]}) == 1
    again = [b[0] for b in CropStore(out.crops).batches(8, 0, 2, "cpu")(0)]
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(seen, again))
    # one reused buffer per group: every crop of the store comes out exactly once per epoch, none left over
    # from an earlier group (the last group here is a part-filled 18 of 32)
    streamed = sorted(v.tobytes() for b in seen for v in to_uint8(b))
    assert streamed == sorted(v.tobytes() for v in values)


def test_writer_holds_at_most_a_chunk_plus_one_image(tmp_path):
    writer = data.CropWriter(tmp_path / "w.zarr", 40, 8, 16)
    peak = 0
    for _ in range(4):
        writer.add(np.zeros((10, 8, 8, 3), np.uint8))
        peak = max(peak, sum(len(b) for b in writer.buffer))
    writer.close()
    assert peak < 16 and writer.written == 40


def test_data_stage_memory_is_flat_in_the_number_of_crops(tmp_path, folders):
    import tracemalloc

    peaks = []
    for crops in (64, 640):
        tracemalloc.start()
        run_data(tmp_path / str(crops), folders, crops=crops, test_short_side=64)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.5 * peaks[0]  # ten times the crops, about the same peak (one image and one chunk)


def test_unreadable_images_are_counted_named_and_bounded(tmp_path, folders):
    bad = tmp_path / "kodak"
    bad.mkdir()
    for p in sorted((folders / "kodak").glob("*.png"))[:4]:
        (bad / p.name).write_bytes(p.read_bytes())
    (bad / "kodim05.png").write_bytes(b"not a png")
    out, manifest = run_data(tmp_path, folders, test_dir=str(bad), max_bad_fraction=0.2)
    assert manifest["refused"]["count"] == 1 and manifest["refused"]["first"][0]["file"].endswith("kodim05.png")
    assert "kodim05" not in load_test(out.test)
    with pytest.raises(InputError, match="1 of 13 images refused"):
        run_data(tmp_path, folders, test_dir=str(bad), max_bad_fraction=0.0)


def test_missing_and_empty_folders_and_small_images_are_named(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        data.folder_images(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no image files"):
        data.folder_images(tmp_path / "empty")
    with pytest.raises(ValueError, match="smaller than"):
        data.random_crops(np.zeros((8, 8, 3), np.uint8), 1, 16, np.random.default_rng(0))


@pytest.mark.e2e
def test_replacing_one_kodak_image_reruns_exactly_its_downstream_jobs(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    kodak.write(work / "data/cod-lite/kodak")
    clic.write(work / "data/cod-lite/clic")
    rehearsal = yaml.safe_load((work / "config/rehearsal.yaml").read_text())["papers"]["cod-lite"]
    rehearsal["images"] |= {"train_dir": "data/cod-lite/clic/train", "test_dir": "data/cod-lite/kodak"}
    overlay = work / "config/test-cod-lite.yaml"
    overlay.write_text(yaml.safe_dump({"papers": {"cod-lite": rehearsal}}))
    commit_copy(work)
    args = ("cod_lite", "--cores", "2", "--configfile", "config/full.yaml", str(overlay))
    snakemake(work, *args, timeout=1800)
    assert scheduled_rules(work, *args) == {}
    victim = work / "data/cod-lite/kodak/kodim07.png"
    img = np.asarray(data.load_rgb(victim)).copy()
    img[:8] = 0
    from PIL import Image

    Image.fromarray(img).save(victim)
    assert scheduled_rules(work, *args) == {
        "cod_lite_data": 1,
        "cod_lite_train": 2,
        "cod_lite_evaluate": 1,
        "cod_lite_figures": 1,
        "provenance": 1,
        "cod_lite": 1,
    }
