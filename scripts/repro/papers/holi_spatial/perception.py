"""Stand-ins for the paper's foundation models, applied to the rendered ground truth with seeded noise.

- Monocular depth (Depth-Anything-3 stand-in): each frame's true depth with its own scale and shift error,
  a Gaussian blur that smears object boundaries into flying pixels, and multiplicative pixel noise.
- Open-vocabulary masks (Qwen3-VL + SAM3 stand-in): per frame, each visible object is detected with its own
  detectability (some objects are hard and are missed in most frames), its mask is eroded or dilated by a
  pixel, its class label is replaced by a random class with a small probability, and spurious masks
  (ellipses on random pixels with random classes) are added. Each mask carries a detector score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage


@dataclass
class Mask:
    frame: int
    pixels: np.ndarray  # (H, W) bool
    label: str
    score: float
    source: int  # ground-truth object id, -1 for a spurious mask (kept for diagnostics only)


def noisy_depth(depth: np.ndarray, rng: np.random.Generator, cfg: dict) -> np.ndarray:
    """Per-frame affine error + boundary blur + pixel noise on every frame of ``depth`` (F, H, W)."""
    out = np.empty_like(depth)
    for f, d in enumerate(depth):
        scale = 1 + rng.normal(0, cfg["scale_sd"])
        shift = rng.normal(0, cfg["shift_sd"])
        blurred = _blur(d, cfg["blur_px"])
        out[f] = (scale * blurred + shift) * (1 + rng.normal(0, cfg["pixel_sd"], d.shape))
    return out.astype(np.float32)


def _blur(d: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur; with missing pixels (NaN, ScanNet's holes) a normalised convolution over the measured
    ones, so that a hole stays a hole and does not spread."""
    valid = np.isfinite(d)
    if valid.all():
        return ndimage.gaussian_filter(d, sigma)
    num = ndimage.gaussian_filter(np.where(valid, d, 0.0), sigma)
    den = ndimage.gaussian_filter(valid.astype(d.dtype), sigma)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(valid, num / den, np.nan)


def _ellipse(shape: tuple[int, int], rng: np.random.Generator, size: tuple[float, float]) -> np.ndarray:
    h, w = shape
    cy, cx = rng.uniform(0, h), rng.uniform(0, w)
    ry, rx = rng.uniform(*size), rng.uniform(*size)
    v, u = np.mgrid[0:h, 0:w]
    return ((v - cy) / ry) ** 2 + ((u - cx) / rx) ** 2 <= 1


def noisy_masks(
    instance: np.ndarray,
    obj_id: np.ndarray,
    obj_class: list[str],
    classes: list[str],
    rng: np.random.Generator,
    cfg: dict,
) -> list[Mask]:
    """Masks of every frame of ``instance`` (F, H, W) under the noise model of the module docstring."""
    hard = rng.random(len(obj_id)) < cfg["hard_share"]
    detect = np.where(hard, cfg["hard_detect"], cfg["detect"])
    masks = []
    for f, seg in enumerate(instance):
        for k, oid in enumerate(obj_id):
            m = seg == oid
            if m.sum() < cfg["min_pixels"] or rng.random() > detect[k]:
                continue
            op = rng.integers(3)
            if op == 1:
                m = ndimage.binary_erosion(m) if ndimage.binary_erosion(m).sum() >= cfg["min_pixels"] else m
            elif op == 2:
                m = ndimage.binary_dilation(m)
            label = obj_class[k] if rng.random() > cfg["label_flip"] else str(rng.choice(classes))
            masks.append(Mask(f, m, label, float(rng.uniform(*cfg["score_true"])), int(oid)))
        for _ in range(rng.poisson(cfg["spurious_rate"])):
            m = _ellipse(seg.shape, rng, cfg["spurious_size"])
            if m.sum() >= cfg["min_pixels"]:
                masks.append(Mask(f, m, str(rng.choice(classes)), float(rng.uniform(*cfg["score_spurious"])), -1))
    return masks


def oracle_masks(instance: np.ndarray, obj_id: np.ndarray, obj_class: list[str], min_pixels: int) -> list[Mask]:
    """Perfect masks and labels of every object visible in at least ``min_pixels`` pixels."""
    out = []
    for f, seg in enumerate(instance):
        for k, oid in enumerate(obj_id):
            m = seg == oid
            if m.sum() >= min_pixels:
                out.append(Mask(f, m, obj_class[k], 1.0, int(oid)))
    return out
