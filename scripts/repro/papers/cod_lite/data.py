"""Stage: photos -> training crops in a chunked store, full held-out test images, and an image manifest.

Embedded default: scikit-image's sample photos and the ImageNet validation examples shipped by shapiq,
read from the package-data folders (never installed). Full scale: a training folder in the CLIC layout (any
``*.png`` / ``*.jpg`` below it, e.g. the CLIC professional and mobile training sets or OpenImages resized to
256) and a Kodak folder (``kodim01.png`` .. ``kodim24.png``). Both end in the same files:

- crops.zarr: group with array ``crops`` (N, crop, crop, 3) uint8, chunked by ``chunk_crops`` crops. The
  training images are read one at a time (sorted by path), resized to a short side of ``train_short_side``,
  and ``crops`` / (number of images) random crops taken from each (the first images get one more when it
  does not divide); crops are written a chunk at a time, so memory stays flat in the number of crops and
  images (training reads the store by chunks: repro.papers.cod_lite.train);
- test.npz: ``ids`` and ``img/<id>`` (H, W, 3) uint8 for each test image, whole (not centre squares),
  resized so the short side is ``test_short_side`` (null keeps them as they are: Kodak at 768 x 512 and
  512 x 768);
- manifest.json: one row per source image (image_id, member, split, height, width, bytes, sha256), the
  refused files (unreadable images: counted and named; more than ``max_bad_fraction`` stops the stage) and
  the settings.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from repro.workflow.fields_io import save_arrays
from repro.workflow.io import InputError, atomic_path, sha256, write_json

log = logging.getLogger(__name__)
SUFFIXES = (".png", ".jpg", ".jpeg")


def load_rgb(path: str | Path) -> np.ndarray:
    """An image file as (H, W, 3) uint8; unreadable files raise InputError naming them."""
    try:
        with Image.open(path) as img:
            return np.asarray(img.convert("RGB"), dtype=np.uint8)
    except (OSError, UnidentifiedImageError, ValueError) as err:
        raise InputError(path, f"not a readable image ({err})") from err


def folder_images(folder: str | Path) -> list[Path]:
    """Every image file below a Kodak/CLIC-style folder, sorted by relative path; none is an error."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(root, "image folder does not exist")
    files = sorted((p for p in root.rglob("*") if p.suffix.lower() in SUFFIXES), key=lambda p: str(p.relative_to(root)))
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


def random_crops(img: np.ndarray, count: int, crop: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` crops of crop x crop pixels of one image, positions uniformly."""
    h, w = img.shape[:2]
    if min(h, w) < crop:
        raise ValueError(f"image of {h}x{w} pixels is smaller than the {crop}-pixel crop")
    out = np.empty((count, crop, crop, 3), np.uint8)
    for i in range(count):
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


class CropWriter:
    """Appends crops to the store's ``crops`` array a whole chunk at a time."""

    def __init__(self, path: Path, count: int, crop: int, chunk: int):
        import zarr

        group = zarr.open_group(str(path), mode="w")
        self.array = group.create_array(
            "crops", shape=(count, crop, crop, 3), chunks=(chunk, crop, crop, 3), dtype="uint8"
        )
        group.attrs.update({"crop": crop, "count": count, "chunk": chunk})
        self.chunk, self.buffer, self.written = chunk, [], 0

    def add(self, crops: np.ndarray) -> None:
        self.buffer.append(crops)
        pending = sum(len(b) for b in self.buffer)
        if pending >= self.chunk:
            block = np.concatenate(self.buffer)
            full = (len(block) // self.chunk) * self.chunk
            self._write(block[:full])
            self.buffer = [block[full:]]

    def close(self) -> None:
        if self.buffer and sum(len(b) for b in self.buffer):
            self._write(np.concatenate(self.buffer))
        self.buffer = []
        if self.written != self.array.shape[0]:
            raise RuntimeError(f"wrote {self.written} crops of {self.array.shape[0]}")

    def _write(self, block: np.ndarray) -> None:
        self.array[self.written : self.written + len(block)] = block
        self.written += len(block)


def main(job) -> None:
    cfg = job.params.settings["images"]
    rng = np.random.default_rng(int(job.params.settings["data_seed"]))
    files = sources(job, cfg)
    if cfg["train_short_side"] is not None and cfg["train_short_side"] < cfg["crop"]:
        raise InputError("images.train_short_side", f"smaller than the {cfg['crop']}-pixel crop")
    rows, refused = [], []

    def read(path: Path, split: str) -> np.ndarray | None:
        try:
            img = load_rgb(path)
        except InputError as err:
            refused.append({"file": str(path), "split": split, "problem": err.problem})
            return None
        rows.append(
            {
                "image_id": path.stem,
                "member": path.name,
                "split": split,
                "height": int(img.shape[0]),
                "width": int(img.shape[1]),
                "bytes": path.stat().st_size,
                "sha256": sha256(path),
            }
        )
        return img

    train_files = files["train"]
    counts = np.full(len(train_files), cfg["crops"] // len(train_files))
    counts[: cfg["crops"] % len(train_files)] += 1
    with atomic_path(job.output.crops) as tmp:
        writer = CropWriter(tmp, cfg["crops"], cfg["crop"], cfg["chunk_crops"])
        carry = 0
        for path, count in zip(train_files, counts):
            img = read(path, "train")
            if img is None:
                carry += int(count)  # the next readable image takes the refused one's crops
                continue
            img, count, carry = resize_short(img, cfg["train_short_side"]), int(count) + carry, 0
            for start in range(0, count, cfg["chunk_crops"]):  # a chunk at a time: flat in crops per image
                writer.add(random_crops(img, min(cfg["chunk_crops"], count - start), cfg["crop"], rng))
        if carry:
            raise InputError(cfg.get("train_dir") or "training images", "the last training images are unreadable")
        writer.close()
    tests: dict[str, np.ndarray] = {}
    for path in files["test"]:
        img = read(path, "test")
        if img is not None:
            tests[path.stem] = resize_short(img, cfg["test_short_side"])
    total = len(files["train"]) + len(files["test"])
    if refused:
        log.warning("cod-lite: refused %d of %d images: %s", len(refused), total, [r["file"] for r in refused[:10]])
    if len(refused) / total > cfg["max_bad_fraction"] or not tests:
        raise InputError(
            cfg.get("test_dir") or "images",
            f"{len(refused)} of {total} images refused (max_bad_fraction {cfg['max_bad_fraction']}): "
            + "; ".join(f"{r['file']}: {r['problem']}" for r in refused[:10]),
        )
    save_arrays(job.output.test, {"ids": np.array(list(tests))} | {f"img/{k}": v for k, v in tests.items()})
    write_json(
        job.output.manifest,
        {
            "source": "package_data" if cfg["source"] == "embedded" else "folder",
            "generator": "repro.papers.cod_lite.data",
            "settings": job.params.settings,
            "images": rows,
            "refused": {"count": len(refused), "of": total, "first": refused[:10]},
            "files": {"test.npz": {"sha256": sha256(job.output.test)}},
        },
    )
