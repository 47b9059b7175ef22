"""Source/target regression pairs under shift, built from one digits source (repro.data.images.derived).

The train split is halved (alternate images): one half is the labelled source, the other the unlabelled
target; the test split under the target domain measures the adapted model. A transfer names its continuous
target (``rotation``: the angle each digit is rotated by; ``thickness``: its stroke width) and the target's
domain shift (a domain kind, e.g. ``noise:0.3``, or ``none`` for the same-domain sanity pair). Targets are
normalised to [0, 1] with the source labels' range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.data.images import read_images
from repro.data.images.derived import domain_sequence, rotation_regression, stroke_thickness_target


@dataclass
class Pair:
    """Arrays of one transfer (inputs flattened, targets normalised) and the scale back to target units."""

    x_source: np.ndarray
    y_source: np.ndarray
    x_target: np.ndarray
    y_target: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    low: float
    span: float


def _targets(images: np.ndarray, kind: str, angles: tuple[float, float], seed: int) -> tuple[np.ndarray, np.ndarray]:
    if kind == "rotation":
        return rotation_regression(images, angles, seed)
    if kind == "thickness":
        return images, stroke_thickness_target(images)
    raise ValueError(f"unknown regression target {kind!r}; expected rotation or thickness")


def _shift(images: np.ndarray, shift: str, seed: int) -> np.ndarray:
    if shift == "none":
        return images
    return domain_sequence(images, np.zeros(len(images), dtype=np.int64), [shift], seed)[0][0]


def build_pair(path: str, source: str, transfer: dict, angles: tuple[float, float], seed: int) -> Pair:
    data = read_images(path, source)
    train, test = data.subset("train").images, data.subset("test").images
    xs, ys = _targets(train[0::2], transfer["target"], angles, seed)
    xt, yt = _targets(train[1::2], transfer["target"], angles, seed + 1)
    xe, ye = _targets(test, transfer["target"], angles, seed + 2)
    xt, xe = _shift(xt, transfer["shift"], seed + 3), _shift(xe, transfer["shift"], seed + 4)
    low, span = float(ys.min()), float(max(ys.max() - ys.min(), 1e-12))

    def flat(x: np.ndarray) -> np.ndarray:
        return x.reshape(len(x), -1).astype(np.float32)

    def norm(y: np.ndarray) -> np.ndarray:
        return ((y - low) / span).astype(np.float32)

    return Pair(flat(xs), norm(ys), flat(xt), norm(yt), flat(xe), norm(ye), low, span)
