"""Source/target regression pairs under shift: rotated digits (embedded default) or dSprites / MPI3D (paper scale).

Digits (repro.data.images.derived): the train split is halved (alternate images): one half is the labelled
source, the other the unlabelled target; the test split under the target domain measures the adapted model. A
digits transfer names its continuous target (``rotation``: the angle each digit is rotated by; ``thickness``: its
stroke width) and the target's domain shift (a domain kind, e.g. ``noise:0.3``, or ``none`` for the same-domain
sanity pair).

Benchmarks (repro.papers.sfda_regression.benchmarks): a transfer names the ``dataset`` (dsprites or mpi3d), its
``source_domain`` and ``target_domain`` and the continuous ``factor`` regressed; disjoint seeded samples of
``samples.source`` source, ``samples.target`` unlabelled target and ``samples.test`` target-test images are read
from the release and block-averaged to ``image_size`` pixels.

Targets are normalised to [0, 1] with the source labels' range.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from repro.data.images import read_images
from repro.data.images.derived import domain_sequence, rotation_regression, stroke_thickness_target
from repro.workflow.manifest import file_record


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


def same_domain(transfer: dict) -> bool:
    """The sanity pair: the target domain is the source's."""
    if "dataset" in transfer:
        return transfer["source_domain"] == transfer["target_domain"]
    return transfer["shift"] == "none"


def _normalised(xs, ys, xt, yt, xe, ye) -> Pair:
    low, span = float(ys.min()), float(max(ys.max() - ys.min(), 1e-12))

    def flat(x: np.ndarray) -> np.ndarray:
        return x.reshape(len(x), -1).astype(np.float32)

    def norm(y: np.ndarray) -> np.ndarray:
        return ((y - low) / span).astype(np.float32)

    return Pair(flat(xs), norm(ys), flat(xt), norm(yt), flat(xe), norm(ye), low, span)


def build_benchmark_pair(s: dict, transfer: dict, seed: int) -> tuple[Pair, dict]:
    """The pair of a dSprites or MPI3D transfer and the reader's record (refused rows per split)."""
    from repro.papers.sfda_regression import benchmarks as bm

    n = s["samples"]
    sizes = (n["source"], n["target"], n["test"])
    size, factor = int(s["image_size"]), transfer["factor"]
    record = {}
    if transfer["dataset"] == "dsprites":
        path = s["dsprites"]["path"]
        idx = bm.draw(bm.dsprites_count(path), sizes, seed)
        splits = []
        for name, part, domain in zip(
            ("source", "target", "test"), idx, (transfer["source_domain"],) + (transfer["target_domain"],) * 2
        ):
            refused = bm.Refused()
            splits.append(bm.dsprites_split(path, domain, factor, part, size, seed + len(splits), refused))
            refused.check(Path(path), s["dsprites"]["max_bad_fraction"])
            record[name] = refused.to_dict()
    elif transfer["dataset"] == "mpi3d":
        folder, grid = s["mpi3d"]["folder"], tuple(s["mpi3d"]["factor_sizes"])
        source_n = bm.mpi3d_count(folder, transfer["source_domain"])
        target_n = bm.mpi3d_count(folder, transfer["target_domain"])
        if transfer["source_domain"] == transfer["target_domain"]:
            idx = bm.draw(source_n, sizes, seed)
        else:
            idx = [bm.draw(source_n, sizes[:1], seed)[0], *bm.draw(target_n, sizes[1:], seed + 1)]
        splits = []
        for name, part, domain in zip(
            ("source", "target", "test"), idx, (transfer["source_domain"],) + (transfer["target_domain"],) * 2
        ):
            refused = bm.Refused()
            splits.append(bm.mpi3d_split(folder, domain, factor, part, size, grid, refused))
            record[name] = refused.to_dict()
    else:
        raise ValueError(f"unknown benchmark {transfer['dataset']!r}; expected dsprites or mpi3d")
    read = (
        [Path(s["dsprites"]["path"])]
        if transfer["dataset"] == "dsprites"
        else sorted(
            {bm.mpi3d_path(s["mpi3d"]["folder"], d) for d in (transfer["source_domain"], transfer["target_domain"])}
        )
    )
    record["files"] = [file_record(path) for path in read]  # each input file's size and sha256
    (xs, ys), (xt, yt), (xe, ye) = splits
    return _normalised(xs, ys, xt, yt, xe, ye), record


def build_pair(path: str, source: str, transfer: dict, angles: tuple[float, float], seed: int) -> Pair:
    data = read_images(path, source)
    train, test = data.subset("train").images, data.subset("test").images
    xs, ys = _targets(train[0::2], transfer["target"], angles, seed)
    xt, yt = _targets(train[1::2], transfer["target"], angles, seed + 1)
    xe, ye = _targets(test, transfer["target"], angles, seed + 2)
    xt, xe = _shift(xt, transfer["shift"], seed + 3), _shift(xe, transfer["shift"], seed + 4)
    return _normalised(xs, ys, xt, yt, xe, ye)
