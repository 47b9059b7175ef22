"""Real handwritten digits in one canonical layout (data/images/digits.npz), read as :class:`ImageSet`.

Why one layout: five papers (nmnc, loda, special, ccdb, sfda-regression) train small networks on the
same digits; the ``images_data`` rule (repro.data.images.build) writes every source once, each under
its own keys ``<source>/images`` (uint8, (N, H, W) or (N, C, H, W)), ``<source>/labels`` (int64) and
``<source>/split`` (train/val/test), and every paper reads one source with :func:`read_images`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from repro.workflow.io import InputError, read_npz

SPLITS = ("train", "val", "test")
FIELDS = ("images", "labels", "split")


@dataclass
class ImageSet:
    """Images as float32 in [0, 1] with shape (N, H, W) or (N, C, H, W), int64 labels and a split per image."""

    images: np.ndarray
    labels: np.ndarray
    split: np.ndarray
    source: str

    def __post_init__(self) -> None:
        n = len(self.images)
        if self.images.ndim not in (3, 4) or len(self.labels) != n or len(self.split) != n:
            raise ValueError(
                f"ImageSet {self.source}: images {self.images.shape}, labels {self.labels.shape} and "
                f"split {self.split.shape} must share N, with images (N, H, W) or (N, C, H, W)"
            )

    def __len__(self) -> int:
        return len(self.images)

    def subset(self, split: str) -> ImageSet:
        """The images of one split (train, val or test)."""
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
        keep = self.split == split
        return ImageSet(self.images[keep], self.labels[keep], self.split[keep], self.source)

    @property
    def n_classes(self) -> int:
        return int(self.labels.max()) + 1 if len(self.labels) else 0


def sources_in(arrays: dict[str, np.ndarray]) -> list[str]:
    """The sources an npz holds (each has the keys ``<source>/images``, ``/labels``, ``/split``)."""
    return sorted({key.split("/", 1)[0] for key in arrays if "/" in key})


def read_images(path: str | os.PathLike, source: str = "mnist") -> ImageSet:
    """One source of the canonical digits file; a missing source or malformed array is named with the file."""
    arrays = read_npz(path)
    missing = [f"{source}/{name}" for name in FIELDS if f"{source}/{name}" not in arrays]
    if missing:
        raise InputError(path, f"lacks {missing}; sources present: {sources_in(arrays)}")
    images, labels, split = (arrays[f"{source}/{name}"] for name in FIELDS)
    if images.dtype != np.uint8 or images.ndim not in (3, 4):
        raise InputError(
            path, f"{source}/images must be uint8 (N, H, W) or (N, C, H, W), got {images.dtype} {images.shape}"
        )
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer) or len(labels) != len(images):
        raise InputError(path, f"{source}/labels must be {len(images)} integers, got {labels.dtype} {labels.shape}")
    if len(split) != len(images) or not np.isin(split, SPLITS).all():
        raise InputError(path, f"{source}/split must give one of {SPLITS} for each of the {len(images)} images")
    if labels.min(initial=0) < 0:
        raise InputError(path, f"{source}/labels has negative classes")
    return ImageSet((images.astype(np.float32) / 255.0), labels.astype(np.int64), split.astype(str), source)
