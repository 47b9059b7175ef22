"""Benchmarks derived from real digits by seeded code (numpy and scipy.ndimage only).

- :func:`domain_sequence`: the same digits under a sequence of domains (rotation, noise, blur,
  inversion, colour, stroke dilation/erosion): domain-incremental and continual-learning tasks.
- :func:`coloured_spurious`: Coloured-MNIST-style spurious correlation (each class has a colour it
  wears with probability ``correlation``); group = (label, colour) is for evaluation only.
- :func:`rotation_regression` and :func:`stroke_thickness_target`: continuous targets for regression
  under shift.

Every function takes float images in [0, 1] of shape (N, H, W) and returns float32 arrays.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

# RGB of the named colours a digit's strokes can wear; the first ten give one colour per digit class.
COLOURS = {
    "red": (1.0, 0.0, 0.0),
    "green": (0.0, 1.0, 0.0),
    "blue": (0.0, 0.0, 1.0),
    "yellow": (1.0, 1.0, 0.0),
    "magenta": (1.0, 0.0, 1.0),
    "cyan": (0.0, 1.0, 1.0),
    "orange": (1.0, 0.5, 0.0),
    "purple": (0.5, 0.0, 1.0),
    "lime": (0.5, 1.0, 0.0),
    "white": (1.0, 1.0, 1.0),
}
PALETTE = np.array(list(COLOURS.values()), dtype=np.float32)
DOMAIN_KINDS = ("rotate", "noise", "blur", "invert", "colour", "dilate", "erode")


def _check_images(images: np.ndarray) -> np.ndarray:
    images = np.asarray(images, dtype=np.float32)
    if images.ndim != 3:
        raise ValueError(f"expected grey images (N, H, W), got shape {images.shape}")
    return images


def rotate(images: np.ndarray, degrees: np.ndarray | float) -> np.ndarray:
    """Rotate each image about its centre (bilinear, zero fill, same size); one angle or one per image."""
    images = _check_images(images)
    angles = np.broadcast_to(np.asarray(degrees, dtype=float), (len(images),))
    if np.all(angles == angles[0]):
        out = ndimage.rotate(images, float(angles[0]), axes=(2, 1), reshape=False, order=1, mode="constant")
    else:
        out = np.stack(
            [ndimage.rotate(im, a, reshape=False, order=1, mode="constant") for im, a in zip(images, angles)]
        )
    return np.clip(out, 0.0, 1.0).astype(np.float32)


def colourise(images: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """(N, 3, H, W) images whose strokes wear ``colours`` (an RGB triple, or one per image)."""
    images = _check_images(images)
    rgb = np.broadcast_to(np.asarray(colours, dtype=np.float32), (len(images), 3))
    return (images[:, None] * rgb[:, :, None, None]).astype(np.float32)


def parse_domain(domain: str) -> tuple[str, str | None]:
    """``"rotate:30"`` -> ("rotate", "30"); the kind is checked against :data:`DOMAIN_KINDS`."""
    kind, _, arg = domain.partition(":")
    if kind not in DOMAIN_KINDS:
        raise ValueError(f"unknown domain {domain!r}; kinds: {DOMAIN_KINDS}")
    if kind != "invert" and not arg:
        raise ValueError(f"domain {domain!r} needs an argument, e.g. {kind}:<value>")
    if kind == "colour" and arg not in COLOURS:
        raise ValueError(f"unknown colour {arg!r}; colours: {sorted(COLOURS)}")
    return kind, arg or None


def apply_domain(images: np.ndarray, domain: str, rng: np.random.Generator) -> np.ndarray:
    """One domain's transform of grey images; colour returns (N, 3, H, W), every other kind (N, H, W)."""
    images = _check_images(images)
    kind, arg = parse_domain(domain)
    if kind == "rotate":
        return rotate(images, float(arg))
    if kind == "noise":
        return np.clip(images + rng.normal(0.0, float(arg), images.shape), 0.0, 1.0).astype(np.float32)
    if kind == "blur":
        return ndimage.gaussian_filter(images, sigma=(0.0, float(arg), float(arg))).astype(np.float32)
    if kind == "invert":
        return (1.0 - images).astype(np.float32)
    if kind == "colour":
        return colourise(images, COLOURS[arg])
    size = (1, int(arg), int(arg))
    morph = ndimage.grey_dilation if kind == "dilate" else ndimage.grey_erosion
    return morph(images, size=size).astype(np.float32)


def domain_sequence(
    images: np.ndarray, labels: np.ndarray, domains: list[str], seed: int, *, disjoint: bool = False
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(images, labels)`` per domain, in order (the tasks of a domain-incremental sequence).

    By default every domain transforms all the images (as in Rotated MNIST); ``disjoint=True`` gives each
    domain its own seeded shard of them instead. When any domain is a colour, grey domains are returned
    as three equal channels so that every task has the shape (N, 3, H, W).
    """
    images, labels = _check_images(images), np.asarray(labels, dtype=np.int64)
    for domain in domains:
        parse_domain(domain)
    order = np.random.default_rng([int(seed), len(domains)]).permutation(len(images))
    shards = np.array_split(order, len(domains)) if disjoint else [np.arange(len(images))] * len(domains)
    rgb = any(parse_domain(d)[0] == "colour" for d in domains)
    tasks = []
    for k, (domain, idx) in enumerate(zip(domains, shards)):
        x = apply_domain(images[idx], domain, np.random.default_rng([int(seed), k]))
        if rgb and x.ndim == 3:
            x = np.repeat(x[:, None], 3, axis=1)
        tasks.append((x, labels[idx].copy()))
    return tasks


def coloured_spurious(
    images: np.ndarray, labels: np.ndarray, correlation: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Coloured-MNIST-style data: (images_rgb (N, 3, H, W), labels, spurious colour, group).

    Class c's strokes wear colour c with probability ``correlation`` and one of the other colours
    (uniformly) otherwise, so colour predicts the label on bias-aligned images only. ``group`` =
    label * n_colours + colour is for evaluation (worst-group accuracy) and oracle baselines only.
    """
    images, labels = _check_images(images), np.asarray(labels, dtype=np.int64)
    if not 0.0 <= correlation <= 1.0:
        raise ValueError(f"correlation must lie in [0, 1], got {correlation}")
    n_colours = int(labels.max()) + 1
    if n_colours > len(PALETTE):
        raise ValueError(f"{n_colours} classes but only {len(PALETTE)} colours")
    rng = np.random.default_rng(int(seed))
    aligned = rng.random(len(labels)) < correlation
    shift = rng.integers(1, max(n_colours, 2), size=len(labels)) if n_colours > 1 else np.zeros(len(labels), int)
    spurious = np.where(aligned, labels, (labels + shift) % n_colours).astype(np.int64)
    group = labels * n_colours + spurious
    return colourise(images, PALETTE[spurious]), labels.copy(), spurious, group.astype(np.int64)


def rotation_regression(
    images: np.ndarray, angles_range: tuple[float, float], seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each image rotated by an angle drawn uniformly from ``angles_range`` (degrees); target = the angle."""
    low, high = (float(a) for a in angles_range)
    if high < low:
        raise ValueError(f"angles_range must be (low, high), got {angles_range}")
    images = _check_images(images)
    angles = np.random.default_rng(int(seed)).uniform(low, high, size=len(images))
    return rotate(images, angles), angles.astype(np.float32)


def stroke_thickness_target(images: np.ndarray, threshold: float = 0.5) -> np.ndarray:
    """Mean stroke width per image in pixels, from the ink area A and perimeter P of the thresholded digit.

    A stroke of length L and width w has A = L w and P = 2 (L + w), so w is the smaller root of
    w^2 - (P / 2) w + A = 0 (exact for a straight bar); P counts ink-to-background pixel edges
    (4-neighbourhood). An image without ink gets 0.
    """
    ink = _check_images(images) > threshold
    padded = np.pad(ink, ((0, 0), (1, 1), (1, 1))).astype(np.int8)
    perimeter = np.abs(np.diff(padded, axis=1)).sum(axis=(1, 2)) + np.abs(np.diff(padded, axis=2)).sum(axis=(1, 2))
    area = ink.sum(axis=(1, 2)).astype(float)
    half = perimeter / 2.0
    width = (half - np.sqrt(np.maximum(half**2 - 4.0 * area, 0.0))) / 2.0
    return width.astype(np.float32)
