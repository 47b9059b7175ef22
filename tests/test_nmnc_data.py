"""NMNC's reader of class folders (CIFAR-10 exported as PNGs, from the rehearsal's fixture writer): features
standardised on train, and the data manifest with every image read (bytes, sha256) and the images refused."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from repro.fixtures import cifar10_folders
from repro.papers.nmnc.data import load, write_data_manifest
from repro.workflow.io import InputError, read_json


def section(root, fraction: float = 0.05) -> dict:
    return {"source": {"folders": str(root), "size": [8, 8], "channels": 3, "max_bad_fraction": fraction}}


def test_class_folders_give_standardised_features_and_a_manifest_of_every_image_read(tmp_path):
    root = tmp_path / "cifar10"
    written = cifar10_folders.write(root)
    bad = root / "train" / "frog" / "0005.png"
    bad.write_bytes(bad.read_bytes()[:40])  # cut inside the image data
    splits, inputs = load(section(root), digits_path="unused")
    per = cifar10_folders.PER_SPLIT
    assert {k: len(v.y) for k, v in splits.items()} == {"train": 10 * per["train"] - 1, "val": 60, "test": 100}
    assert splits["train"].x.shape[1] == 8 * 8 * 3
    np.testing.assert_allclose(splits["train"].x.mean(0), 0, atol=1e-4)

    manifest = write_data_manifest(str(tmp_path / "manifest.json"), section(root)["source"], inputs)
    assert manifest == read_json(tmp_path / "manifest.json")
    records = {r["path"]: r for r in manifest["files"]}
    assert set(records) == {str(p) for p in written if p != bad}
    for path in written[:: len(written) // 7]:
        if path != bad:
            assert records[str(path)]["bytes"] == path.stat().st_size
            assert records[str(path)]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert manifest["details"]["refused"]["refused"] == 1
    assert manifest["details"]["refused"]["first_refused"] == ["train/frog/0005.png"]
    assert manifest["source"] == "local" and manifest["versions"]["pillow"]


def test_more_refused_images_than_the_fraction_stop_the_reader_naming_the_folder(tmp_path):
    total = len(cifar10_folders.write(tmp_path))
    (tmp_path / "test" / "deer" / "0000.png").write_text("not a png")
    with pytest.raises(InputError, match=rf"^{tmp_path}: 1 of {total} images refused"):
        load(section(tmp_path, fraction=0.0), digits_path="unused")
