"""Full-scale readers of the image benchmarks the digit papers use at paper scale.

Each reader turns a benchmark's own on-disk layout into an :class:`ImageIndex` (file paths, labels,
split and the attributes group-robustness methods need), checking the layout and naming the file at
fault. Pixels are loaded on demand with :func:`load_images` so an index of ImageNet fits in memory.

- class folders (CIFAR-10 exported as PNGs, ImageNet): ``root/<split>/<class>/<image>``; each file is opened and
  integrity-checked while indexed, an unreadable or corrupt one refused (:class:`repro.data.refusals.Refusals`:
  counted, the first ten named, the summary in ``ImageIndex.refused``), more than ``max_bad_fraction`` refused
  stops the reader;
- Waterbirds (Sagawa et al. 2020): ``metadata.csv`` with img_filename, y, split (0/1/2), place;
- CelebA: ``list_attr_celeba.csv`` (image_id, 40 attributes in {-1, 1}) and ``list_eval_partition.csv``
  (image_id, partition 0/1/2), images under ``img_align_celeba/``;
- DomainNet: list files ``<domain>_<train|test>.txt`` with lines ``<relative path> <label>``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from repro.data.refusals import Refusals
from repro.data.tabular import read_table
from repro.workflow.io import InputError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".ppm")
SPLIT_CODES = {0: "train", 1: "val", 2: "test"}


@dataclass
class ImageIndex:
    """Image files of a benchmark with int64 labels, a split per image and named per-image attributes."""

    root: Path
    paths: np.ndarray
    labels: np.ndarray
    split: np.ndarray
    classes: list[str] = field(default_factory=list)
    attributes: dict[str, np.ndarray] = field(default_factory=dict)
    refused: dict = field(default_factory=dict)
    """The reader's :meth:`Refusals.summary` where it checks the files (class folders), else empty."""

    def subset(self, split: str) -> ImageIndex:
        keep = self.split == split
        attrs = {k: v[keep] for k, v in self.attributes.items()}
        return ImageIndex(
            self.root, self.paths[keep], self.labels[keep], self.split[keep], self.classes, attrs, self.refused
        )


def image_problem(path: Path) -> str | None:
    """Why the image file cannot be used, or None: Pillow must identify it and pass its integrity check
    (``verify``: the header, and for PNG every chunk's checksum), which reads the file but decodes no pixels,
    so indexing ImageNet stays an I/O pass."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image.verify()
    except UnidentifiedImageError:
        return "not an image Pillow identifies"
    except (OSError, SyntaxError, ValueError, EOFError):
        return "corrupt or truncated image"
    return None


def read_class_folders(
    root: str | os.PathLike, splits: tuple[str, ...] = ("train", "val", "test"), max_bad_fraction: float = 0.0
) -> ImageIndex:
    """``root/<split>/<class>/<image>`` (CIFAR-10/ImageNet style); classes are the sorted folder names of the
    first split present, and every other split must use the same names. Unreadable or corrupt images are
    refused by relative path (an InputError naming ``root`` when more than ``max_bad_fraction`` of them are)."""
    root = Path(root)
    present = [s for s in splits if (root / s).is_dir()]
    if not present:
        raise InputError(root, f"no split folder among {list(splits)}")
    classes = sorted(p.name for p in (root / present[0]).iterdir() if p.is_dir())
    if not classes:
        raise InputError(root / present[0], "holds no class folders")
    paths, labels, split = [], [], []
    refusals = Refusals(root, "images")
    for name in present:
        found = sorted(p.name for p in (root / name).iterdir() if p.is_dir())
        if found != classes:
            raise InputError(root / name, f"class folders {found} differ from {present[0]}'s {classes}")
        for label, cls in enumerate(classes):
            files = sorted(p for p in (root / name / cls).iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
            if not files:
                raise InputError(root / name / cls, "holds no images")
            refusals.seen(len(files))
            for path in files:
                rel, problem = str(path.relative_to(root)), image_problem(path)
                if problem:
                    refusals.refuse(rel, problem)
                    continue
                paths.append(rel)
                labels.append(label)
                split.append(name)
    refused = refusals.close(max_bad_fraction)
    return ImageIndex(
        root, np.array(paths), np.array(labels, dtype=np.int64), np.array(split), classes, refused=refused
    )


def _split_names(codes: pd.Series, path: Path) -> np.ndarray:
    bad = sorted(set(codes.unique()) - set(SPLIT_CODES))
    if bad:
        raise InputError(path, f"split codes must be 0/1/2 (train/val/test), found {bad}")
    return codes.map(SPLIT_CODES).to_numpy().astype(str)


def read_waterbirds(root: str | os.PathLike) -> ImageIndex:
    """Waterbirds ``metadata.csv``: label y (waterbird), spurious ``place`` (water background), group = 2y + place."""
    root = Path(root)
    path = root / "metadata.csv"
    table = read_table(path, ["img_filename", "y", "split", "place"])
    for col in ("y", "place"):
        if not set(table[col].unique()) <= {0, 1}:
            raise InputError(path, f"column {col} must be 0/1")
    y, place = table["y"].to_numpy(np.int64), table["place"].to_numpy(np.int64)
    return ImageIndex(
        root,
        table["img_filename"].to_numpy().astype(str),
        y,
        _split_names(table["split"], path),
        ["landbird", "waterbird"],
        {"spurious": place, "group": 2 * y + place},
    )


def read_celeba(root: str | os.PathLike, target: str = "Blond_Hair", spurious: str = "Male") -> ImageIndex:
    """CelebA attribute and partition CSVs: label = ``target`` attribute, spurious = ``spurious`` attribute
    (both from {-1, 1} to {0, 1}), group = 2 label + spurious; images under ``img_align_celeba/``."""
    root = Path(root)
    attr_path, part_path = root / "list_attr_celeba.csv", root / "list_eval_partition.csv"
    attrs = read_table(attr_path, ["image_id", target, spurious])
    parts = read_table(part_path, ["image_id", "partition"])
    for col in (target, spurious):
        if not set(attrs[col].unique()) <= {-1, 1}:
            raise InputError(attr_path, f"attribute {col} must be -1/1")
    table = attrs.merge(parts, on="image_id", how="left", validate="one_to_one")
    if table["partition"].isna().any():
        missing = table.loc[table["partition"].isna(), "image_id"].iloc[0]
        raise InputError(part_path, f"no partition for image {missing}")
    y = (table[target].to_numpy() > 0).astype(np.int64)
    s = (table[spurious].to_numpy() > 0).astype(np.int64)
    paths = np.array([f"img_align_celeba/{name}" for name in table["image_id"]])
    split = _split_names(table["partition"].astype(int), part_path)
    return ImageIndex(root, paths, y, split, [f"not {target}", target], {"spurious": s, "group": 2 * y + s})


def read_domainnet(
    root: str | os.PathLike, domains: list[str], splits: tuple[str, ...] = ("train", "test")
) -> ImageIndex:
    """DomainNet list files ``<domain>_<split>.txt`` (``<path> <label>`` per line); attribute ``domain`` is
    the index of the image's domain in ``domains``; classes are the folder names of the paths."""
    root = Path(root)
    paths, labels, split, domain_ids, names = [], [], [], [], {}
    for d, domain in enumerate(domains):
        for name in splits:
            path = root / f"{domain}_{name}.txt"
            if not path.exists():
                raise InputError(path, f"list file of domain {domain!r}, split {name!r} is missing")
            for lineno, line in enumerate(path.read_text().splitlines(), start=1):
                if not line.strip():
                    continue
                parts = line.split()
                if len(parts) != 2 or not parts[1].isdigit():
                    raise InputError(path, f"line {lineno}: expected '<path> <label>', got {line!r}")
                rel, label = parts[0], int(parts[1])
                if len(Path(rel).parts) < 3:
                    raise InputError(path, f"line {lineno}: path {rel!r} is not <domain>/<class>/<file>")
                if names.setdefault(label, Path(rel).parts[1]) != Path(rel).parts[1]:
                    raise InputError(path, f"line {lineno}: label {label} names two classes")
                paths.append(rel)
                labels.append(label)
                split.append(name)
                domain_ids.append(d)
    classes = [names.get(k, "") for k in range(max(names) + 1)] if names else []
    return ImageIndex(
        root,
        np.array(paths),
        np.array(labels, dtype=np.int64),
        np.array(split),
        classes,
        {"domain": np.array(domain_ids, dtype=np.int64)},
    )


def load_images(index: ImageIndex, size: tuple[int, int], channels: int = 3) -> np.ndarray:
    """Pixels of every image in ``index`` resized to ``size`` (H, W), float32 in [0, 1], (N, C, H, W)."""
    from PIL import Image, UnidentifiedImageError

    mode = {1: "L", 3: "RGB"}[channels]
    out = np.empty((len(index.paths), channels, *size), dtype=np.float32)
    for i, rel in enumerate(index.paths):
        path = index.root / rel
        try:
            with Image.open(path) as image:
                pixels = np.asarray(image.convert(mode).resize(size[::-1], Image.BILINEAR), dtype=np.float32)
        except (OSError, UnidentifiedImageError) as err:
            raise InputError(path, f"cannot read the image ({err})") from err
        out[i] = (pixels[None] if channels == 1 else pixels.transpose(2, 0, 1)) / 255.0
    return out
