"""Rule entry ``pai_graphon_data``: the two inputs in the canonical layout (data/pai-graphon/<name>.zarr).

Each store has ``X`` (N, 64) float32, ``y`` (N,) int64, ``split`` (N,) in {'train', 'test'} (stored as
uint8: 0 train, 1 test) and the attribute ``informative_idx`` (coordinates the target depends on; empty for
digits) plus ``n_classes``.
- synthetic: x ~ N(0, I_64), y = 1[x_1 x_2 + x_3 - x_4 > 0] (only 4 informative coordinates), seeded;
- digits: scikit-learn's bundled 8x8 digits (1,797 images, pixels scaled to [0, 1]), split by a seeded
  permutation; border pixels are almost always 0.
A CIFAR/MNIST converter would flatten to the same X/y/split layout.
"""

from __future__ import annotations

import datetime as dt
import hashlib

import numpy as np
import zarr
from sklearn.datasets import load_digits

from repro.workflow.io import atomic_path, write_json

INFORMATIVE = (0, 1, 2, 3)


def synthetic(n_train: int, n_test: int, rng: np.random.Generator) -> dict:
    """Gaussian inputs; the label depends on the first four coordinates only."""
    X = rng.standard_normal((n_train + n_test, 64)).astype(np.float32)
    y = (X[:, 0] * X[:, 1] + X[:, 2] - X[:, 3] > 0).astype(np.int64)
    split = np.r_[np.zeros(n_train, np.uint8), np.ones(n_test, np.uint8)]
    return {"X": X, "y": y, "split": split, "informative_idx": list(INFORMATIVE), "n_classes": 2}


def digits(test_fraction: float, rng: np.random.Generator) -> dict:
    """scikit-learn's bundled digits with pixels in [0, 1] and a seeded train/test split."""
    bunch = load_digits()
    order = rng.permutation(len(bunch.target))
    X = (bunch.data[order] / 16.0).astype(np.float32)
    n_test = int(round(test_fraction * len(order)))
    split = np.r_[np.zeros(len(order) - n_test, np.uint8), np.ones(n_test, np.uint8)]
    return {"X": X, "y": bunch.target[order].astype(np.int64), "split": split, "informative_idx": [], "n_classes": 10}


def write_store(path, content: dict) -> dict:
    """Write one dataset atomically; return the checksums of its arrays."""
    with atomic_path(path) as tmp:
        group = zarr.open_group(tmp, mode="w")
        for name in ("X", "y", "split"):
            group.create_array(name, data=content[name])
        group.attrs.update({"informative_idx": content["informative_idx"], "n_classes": content["n_classes"]})
    return {name: hashlib.sha256(content[name].tobytes()).hexdigest() for name in ("X", "y", "split")}


def main(job) -> None:
    s, seed = job.params.settings["sizes"], int(job.params.seed)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 7]))
    made = {
        "synthetic": synthetic(s["n_train"], s["n_test"], rng),
        "digits": digits(s["digits_test_fraction"], rng),
    }
    checksums = {name: write_store(getattr(job.output, name), content) for name, content in made.items()}
    write_json(
        job.output.manifest,
        {
            "source": "synthetic generator (seeded) and scikit-learn's bundled digits (BSD-3-Clause; UCI optdigits)",
            "producer": "embedded",
            "seed": seed,
            "settings": s,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "sha256": checksums,
        },
    )
