"""NMNC's inputs: digits from the shared images source (embedded default) or a class-folder benchmark
(CIFAR-10 exported as images, full scale), flattened and standardised per feature with training-split
statistics.

The class folders are the user's files: the reader refuses unreadable or corrupt images (counted, the first
ten named, more than ``source.max_bad_fraction`` stops the stage), and the train stage's data manifest
(results/nmnc/data/manifest.json) records every image read (size, sha256) and the refusals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from repro.data.images import read_images
from repro.data.images.benchmarks import load_images, read_class_folders
from repro.workflow.manifest import file_record, write_manifest

LICENCE = {
    "folders": "class-folder benchmark placed by the user (CIFAR-10 or ImageNet), under the dataset's own terms",
    "digits": "derived from the shared images source (see data/images/manifest.json)",
}


@dataclass
class Split:
    x: np.ndarray
    y: np.ndarray


@dataclass
class Inputs:
    """What was read, for the manifest: each input file's record and the images refused (class folders)."""

    kind: str
    files: list[dict[str, Any]]
    refused: dict[str, Any]


def load(section: dict, digits_path: str) -> tuple[dict[str, Split], Inputs]:
    """train/val/test as flattened float32 features (standardised on train) and int64 labels; what was read."""
    source = section["source"]
    if source.get("folders"):
        index = read_class_folders(source["folders"], max_bad_fraction=source["max_bad_fraction"])
        images = load_images(index, tuple(source["size"]), channels=source.get("channels", 3))
        labels, split = index.labels, index.split
        inputs = Inputs("folders", [file_record(index.root / rel, role="input") for rel in index.paths], index.refused)
    else:
        digits = read_images(digits_path, source["name"])
        images, labels, split = digits.images, digits.labels, digits.split
        inputs = Inputs("digits", [file_record(digits_path, role="input")], {})
    flat = images.reshape(len(images), -1).astype(np.float64)
    train = split == "train"
    mean, std = flat[train].mean(0), flat[train].std(0)
    flat = (flat - mean) / np.where(std > 0, std, 1.0)
    splits = {
        name: Split(flat[split == name].astype(np.float32), labels[split == name]) for name in ("train", "val", "test")
    }
    return splits, inputs


def write_data_manifest(path: str, source: dict, inputs: Inputs) -> dict[str, Any]:
    """The data manifest: every input file (path, bytes, sha256) and, for class folders, the refusals."""
    return write_manifest(
        path,
        source="local" if inputs.kind == "folders" else "derived",
        producer="repro.papers.nmnc.data",
        files=inputs.files,
        licence=LICENCE[inputs.kind],
        settings={"source": source},
        packages=["pillow"] if inputs.kind == "folders" else [],
        details={"refused": inputs.refused} if inputs.kind == "folders" else None,
    )
