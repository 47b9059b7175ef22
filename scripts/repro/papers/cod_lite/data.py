"""Stage: photos -> training crops and held-out test images (uint8 RGB) plus an image manifest.

Embedded default: scikit-image's sample photos and the ImageNet validation examples shipped by shapiq,
read from the package-data folders (never installed). Full scale: folders of images in the Kodak / CLIC
layout (any *.png / *.jpg files, one image each). Both end in the same files:

- images.npz: ``train`` (N, crop, crop, 3) random crops of the training images, ``test`` (M, s, s, 3) centre
  squares of the test images resized to ``test_size`` (or kept at full size when it is null and all agree),
  ``test_ids`` their names;
- manifest.json: one row per source image (image_id, member, split, height, width, sha256) and the settings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from repro.workflow.fields_io import save_arrays
from repro.workflow.io import InputError, sha256, write_json

SUFFIXES = (".png", ".jpg", ".jpeg")


def load_rgb(path: str | Path) -> np.ndarray:
    """An image file as (H, W, 3) uint8; unreadable files raise InputError naming them."""
    try:
        with Image.open(path) as img:
            return np.asarray(img.convert("RGB"), dtype=np.uint8)
    except (OSError, UnidentifiedImageError) as err:
        raise InputError(path, f"not a readable image ({err})") from err


def folder_images(folder: str | Path) -> list[Path]:
    """Every image file of a Kodak/CLIC-style folder, sorted by name; an empty folder is an error."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(root, "image folder does not exist")
    files = sorted(p for p in root.iterdir() if p.suffix.lower() in SUFFIXES)
    if not files:
        raise InputError(root, f"no image files ({', '.join(SUFFIXES)})")
    return files


def resize_short(img: np.ndarray, short: int | None) -> np.ndarray:
    """Resize so the short side is ``short`` (area filter), keeping the aspect ratio; None keeps the size."""
    h, w = img.shape[:2]
    if short is None or min(h, w) == short:
        return img
    scale = short / min(h, w)
    size = (max(short, round(w * scale)), max(short, round(h * scale)))
    return np.asarray(Image.fromarray(img).resize(size, Image.Resampling.BOX))


def centre_square(img: np.ndarray, size: int | None) -> np.ndarray:
    """The centre square of the image resized to size x size (None: the largest centre square, as is)."""
    h, w = img.shape[:2]
    side = min(h, w)
    top, left = (h - side) // 2, (w - side) // 2
    square = img[top : top + side, left : left + side]
    return square if size is None else resize_short(square, size)


def random_crops(images: list[np.ndarray], count: int, crop: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` crops of crop x crop pixels, images drawn uniformly, positions uniformly."""
    out = np.empty((count, crop, crop, 3), np.uint8)
    for i in range(count):
        img = images[rng.integers(len(images))]
        h, w = img.shape[:2]
        if min(h, w) < crop:
            raise ValueError(f"image of {h}x{w} pixels is smaller than the {crop}-pixel crop")
        top, left = rng.integers(h - crop + 1), rng.integers(w - crop + 1)
        out[i] = img[top : top + crop, left : left + crop]
    return out


def sources(job, cfg: dict) -> dict[str, list[Path]]:
    """Train and test image files for the configured source."""
    if cfg["source"] == "folder":
        return {"train": folder_images(cfg["train_dir"]), "test": folder_images(cfg["test_dir"])}
    roots = {"skimage": Path(job.input.skimage) / "skimage/data", "imagenet": Path(job.input.imagenet)}
    imagenet = sorted((roots["imagenet"] / "shapiq_games/benchmark/imagenet_examples").glob("*.JPEG"))
    if len(imagenet) < cfg["imagenet_train"] + cfg["imagenet_test"]:
        raise InputError(roots["imagenet"], f"only {len(imagenet)} ImageNet examples")
    split = len(imagenet) - cfg["imagenet_test"]
    return {
        "train": [roots["skimage"] / n for n in cfg["train_images"]] + imagenet[: cfg["imagenet_train"]],
        "test": [roots["skimage"] / n for n in cfg["test_images"]] + imagenet[split:],
    }


def main(job) -> None:
    cfg = job.params.settings["images"]
    rng = np.random.default_rng(int(job.params.settings["data_seed"]))
    files = sources(job, cfg)
    rows, train_imgs, test_imgs = [], [], []
    for split, paths in files.items():
        for path in paths:
            img = load_rgb(path)
            rows.append(
                {
                    "image_id": path.stem,
                    "member": path.name,
                    "split": split,
                    "height": int(img.shape[0]),
                    "width": int(img.shape[1]),
                    "sha256": sha256(path),
                }
            )
            if split == "train":
                train_imgs.append(resize_short(img, cfg["train_short_side"]))
            else:
                test_imgs.append(centre_square(img, cfg["test_size"]))
    if len({t.shape for t in test_imgs}) != 1:
        raise InputError(cfg.get("test_dir", "test images"), "test images differ in size; set images.test_size")
    train = random_crops(train_imgs, cfg["crops"], cfg["crop"], rng)
    test_ids = np.array([p.stem for p in files["test"]])
    save_arrays(job.output.images, {"train": train, "test": np.stack(test_imgs), "test_ids": test_ids})
    write_json(
        job.output.manifest,
        {
            "source": "package_data" if cfg["source"] == "embedded" else "folder",
            "generator": "repro.papers.cod_lite.data",
            "settings": job.params.settings,
            "images": rows,
            "files": {"images.npz": {"sha256": sha256(job.output.images)}},
        },
    )
