"""NMNC's inputs: digits from the shared images source (embedded default) or a class-folder benchmark
(CIFAR-10 exported as images, full scale), flattened and standardised per feature with training-split
statistics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.data.images import read_images
from repro.data.images.benchmarks import load_images, read_class_folders


@dataclass
class Split:
    x: np.ndarray
    y: np.ndarray


def load(section: dict, digits_path: str) -> dict[str, Split]:
    """train/val/test as flattened float32 features (standardised on train) and int64 labels."""
    source = section["source"]
    if source.get("folders"):
        index = read_class_folders(source["folders"])
        images = load_images(index, tuple(source["size"]), channels=source.get("channels", 3))
        labels, split = index.labels, index.split
    else:
        digits = read_images(digits_path, source["name"])
        images, labels, split = digits.images, digits.labels, digits.split
    flat = images.reshape(len(images), -1).astype(np.float64)
    train = split == "train"
    mean, std = flat[train].mean(0), flat[train].std(0)
    flat = (flat - mean) / np.where(std > 0, std, 1.0)
    return {
        name: Split(flat[split == name].astype(np.float32), labels[split == name]) for name in ("train", "val", "test")
    }
