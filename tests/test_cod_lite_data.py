"""CoD-Lite's image readers: Kodak/CLIC-style folders on tiny files, crops, and clear errors."""

import json
from types import SimpleNamespace as NS

import numpy as np
import pytest
from PIL import Image

from repro.papers.cod_lite import data
from repro.workflow.io import InputError


def write_folder(root, sizes, suffix=".png"):
    root.mkdir()
    rng = np.random.default_rng(0)
    for i, (h, w) in enumerate(sizes):
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(root / f"kodim{i + 1:02d}{suffix}")
    return root


def job_for(tmp_path, settings):
    return NS(
        input=NS(),
        output=NS(images=str(tmp_path / "images.npz"), manifest=str(tmp_path / "manifest.json")),
        params=NS(settings=settings),
    )


def test_folder_source_writes_crops_test_squares_and_manifest(tmp_path):
    train_dir = write_folder(tmp_path / "train", [(40, 60), (50, 50)], ".jpg")
    test_dir = write_folder(tmp_path / "kodak", [(24, 36), (36, 24)])
    settings = {
        "data_seed": 0,
        "images": {
            "source": "folder",
            "train_dir": str(train_dir),
            "test_dir": str(test_dir),
            "train_short_side": 32,
            "crop": 16,
            "crops": 5,
            "test_size": 16,
        },
    }
    job = job_for(tmp_path, settings)
    data.main(job)
    with np.load(job.output.images) as out:
        assert out["train"].shape == (5, 16, 16, 3) and out["train"].dtype == np.uint8
        assert out["test"].shape == (2, 16, 16, 3)
        assert list(out["test_ids"]) == ["kodim01", "kodim02"]
    manifest = json.loads(open(job.output.manifest).read())
    assert [(r["split"], r["height"], r["width"]) for r in manifest["images"]] == [
        ("train", 40, 60),
        ("train", 50, 50),
        ("test", 24, 36),
        ("test", 36, 24),
    ]


def test_empty_folder_and_unreadable_image_are_named(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no image files"):
        data.folder_images(tmp_path / "empty")
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    with pytest.raises(InputError, match="bad.png"):
        data.load_rgb(bad)


def test_crops_larger_than_the_image_are_refused():
    with pytest.raises(ValueError, match="smaller than"):
        data.random_crops([np.zeros((8, 8, 3), np.uint8)], 1, 16, np.random.default_rng(0))
