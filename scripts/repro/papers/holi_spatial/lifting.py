"""Lifting 2D masks to 3D instances: the paper's multi-view merging, confidence tiers and verifier, and the
single-frame baseline.

- Per-view point sets: each mask back-projected with the frame's depth; pixels far from the mask's median
  depth (boundary bleed onto the background) are dropped.
- Multi-view merging (the paper's `3d_bounding_instance` step): every per-view set starts as a track; the two
  tracks whose boxes overlap most are merged while their 3D IoU is at least ``merge_iou`` (0.30 in the
  official script), and the merged (quantile-trimmed) box is recomputed from the union of points after each
  merge. The final box is the extent of the points on voxels seen from at least max(2, ``support_share`` x views)
  views: multi-view support, not trimming, removes the floaters, so clean data gives unshrunk boxes.
- Confidence tiers (reconstructed; the paper's thresholds were not located): high when an instance is supported
  by at least ``high_views`` views, middle from ``mid_views``, low below. Filtering keeps the high tier.
- Verifier (rule-based stand-in for the VLM agent): re-judges the middle and low tiers, accepting an instance
  whose majority class holds at least ``class_consistency`` of its votes, whose box fits that class's size prior,
  which has at least two supporting views and which is no duplicate (its box does not overlap an accepted
  instance by more than ``duplicate_overlap`` of the smaller box).
- Single-frame baseline: one box per mask from that frame's depth alone, duplicates across frames suppressed by
  class-agnostic 3D non-maximum suppression (feed-forward, no fusion of points).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from repro.papers.holi_spatial.boxes import iou_matrix
from repro.papers.holi_spatial.geometry import backproject
from repro.papers.holi_spatial.perception import Mask


@dataclass
class Track:
    points: np.ndarray
    frames: np.ndarray  # frame index of every point
    labels: Counter = field(default_factory=Counter)
    scores: list[float] = field(default_factory=list)
    views: set[int] = field(default_factory=set)


def view_points(mask: Mask, depth: np.ndarray, K: np.ndarray, pose: np.ndarray, max_dev: float) -> np.ndarray:
    """Mask pixels back-projected with ``depth``, minus those off the mask's median depth by more than max_dev."""
    keep = mask.pixels & np.isfinite(depth)  # ScanNet's missing depth (NaN) has no point
    z = depth[keep]
    if z.size == 0:
        return np.empty((0, 3))
    keep[keep] = np.abs(z - np.median(z)) <= max_dev
    return backproject(depth, K, pose, keep)


def robust_box(points: np.ndarray, quantile: float, max_points: int = 4000) -> tuple[np.ndarray, np.ndarray]:
    """Box between the per-axis ``quantile`` and ``1 - quantile`` of the points (a fixed stride subsample of at
    most ``max_points``, so merging many views stays cheap)."""
    sub = points[:: max(1, len(points) // max_points)]
    lo, hi = np.quantile(sub, [quantile, 1 - quantile], axis=0)
    return lo, hi


def supported_points(track: Track, voxel: float, share: float) -> np.ndarray:
    """Points on voxels that at least max(2, share x views) of the track's views hit (all points of a one-view
    track; the most-supported voxels when none reaches the bar)."""
    if len(track.views) < 2:
        return track.points
    keys = np.floor(track.points / voxel).astype(np.int64)
    pairs = np.unique(np.column_stack([keys, track.frames]), axis=0)
    vox, counts = np.unique(pairs[:, :3], axis=0, return_counts=True)
    good = vox[counts >= min(np.max(counts), max(2, share * len(track.views)))]
    return track.points[_member(keys, good)]


def _member(keys: np.ndarray, good: np.ndarray) -> np.ndarray:
    """Rows of ``keys`` that occur in ``good`` (integer triples compared as structured scalars)."""
    view = np.ascontiguousarray(keys).view([("", keys.dtype)] * 3).ravel()
    gview = np.ascontiguousarray(good).view([("", good.dtype)] * 3).ravel()
    return np.isin(view, gview)


def make_tracks(masks: list[Mask], depths: np.ndarray, K: np.ndarray, poses: np.ndarray, cfg: dict) -> list[Track]:
    tracks = []
    for m in masks:
        pts = view_points(m, depths[m.frame], K, poses[m.frame], cfg["max_depth_dev"])
        if len(pts) >= cfg["min_points"]:
            tracks.append(Track(pts, np.full(len(pts), m.frame), Counter({m.label: m.score}), [m.score], {m.frame}))
    return tracks


def overlap(lo: np.ndarray, hi: np.ndarray, labels: list[str], contain: float, row: int | None = None) -> np.ndarray:
    """Merge score of track pairs: the boxes' 3D IoU, raised to 1 when the smaller box of two tracks with the same
    majority class lies at least ``contain`` inside the larger (a partial view of the same object)."""
    sel = slice(None) if row is None else slice(row, row + 1)
    iou = iou_matrix(lo[sel], hi[sel], lo, hi)
    inter = np.prod(
        np.clip(np.minimum(hi[sel][:, None], hi[None]) - np.maximum(lo[sel][:, None], lo[None]), 0, None), axis=-1
    )
    vol = np.prod(hi - lo, axis=-1)
    smaller = np.minimum(vol[sel][:, None], vol[None])
    same = np.array(labels)[sel][:, None] == np.array(labels)[None]
    inside = same & (inter >= contain * np.where(smaller > 0, smaller, np.inf))
    out = np.where(inside, 1.0, iou)
    return out if row is None else out[0]


def merge_tracks(tracks: list[Track], cfg: dict) -> list[Track]:
    """Iteratively merge the most-overlapping pair while its box IoU reaches cfg['merge_iou']."""
    tracks = list(tracks)
    q = cfg["box_quantile"]
    boxes = [robust_box(t.points, q) for t in tracks]
    lo, hi = np.array([b[0] for b in boxes]).reshape(-1, 3), np.array([b[1] for b in boxes]).reshape(-1, 3)
    labels = [t.labels.most_common(1)[0][0] for t in tracks]
    iou = overlap(lo, hi, labels, cfg["contain"])
    np.fill_diagonal(iou, -1)
    alive = np.ones(len(tracks), dtype=bool)
    while alive.sum() > 1:
        i, j = np.unravel_index(int(np.argmax(iou)), iou.shape)
        if iou[i, j] < cfg["merge_iou"]:
            break
        a, b = tracks[i], tracks[j]
        a.points = np.concatenate([a.points, b.points])
        a.frames = np.concatenate([a.frames, b.frames])
        a.labels.update(b.labels)
        a.scores += b.scores
        a.views |= b.views
        alive[j] = False
        iou[j, :] = iou[:, j] = -1
        lo[i], hi[i] = robust_box(a.points, q)
        labels[i] = a.labels.most_common(1)[0][0]
        row = overlap(lo, hi, labels, cfg["contain"], i)
        row[~alive] = -1
        row[i] = -1
        iou[i, :] = iou[:, i] = row
    return [t for t, keep in zip(tracks, alive, strict=True) if keep]


def instances(tracks: list[Track], cfg: dict) -> list[dict]:
    """Final instances: box from the multi-view-supported points, majority class, views, confidence, tier."""
    out = []
    for t in tracks:
        pts = supported_points(t, cfg["support_voxel"], cfg["support_share"])
        lo, hi = pts.min(0), pts.max(0)
        label, votes = t.labels.most_common(1)[0]
        n = len(t.views)
        tier = "high" if n >= cfg["high_views"] else "mid" if n >= cfg["mid_views"] else "low"
        out.append(
            {
                "cls": label,
                "lo": lo.tolist(),
                "hi": hi.tolist(),
                "views": n,
                "tier": tier,
                "consistency": float(votes / sum(t.labels.values())),
                "score": float(np.mean(t.scores) * min(1.0, n / cfg["high_views"])),
            }
        )
    return out


def verify(inst: dict, priors: dict, cfg: dict, accepted: list[dict]) -> bool:
    """The rule-based verifier's verdict on one instance (see the module docstring); ``accepted`` are the
    instances already kept, which a duplicate may not overlap."""
    size = np.asarray(inst["hi"]) - np.asarray(inst["lo"])
    if accepted:
        lo, hi = np.array([a["lo"] for a in accepted]), np.array([a["hi"] for a in accepted])
        inter = np.prod(np.clip(np.minimum(hi, inst["hi"]) - np.maximum(lo, inst["lo"]), 0, None), axis=-1)
        smaller = np.minimum(np.prod(hi - lo, axis=-1), np.prod(size))
        if np.any(inter > cfg["duplicate_overlap"] * smaller):
            return False
    prior = priors.get(inst["cls"])
    fits = prior is not None and bool(
        np.all(np.sort(size) >= np.sort(prior["min"])) and np.all(np.sort(size) <= np.sort(prior["max"]))
    )
    return inst["views"] >= 2 and inst["consistency"] >= cfg["class_consistency"] and fits


def multiview(masks: list[Mask], depths: np.ndarray, K: np.ndarray, poses: np.ndarray, cfg: dict) -> list[dict]:
    return instances(merge_tracks(make_tracks(masks, depths, K, poses, cfg), cfg), cfg)


def single_frame(masks: list[Mask], depths: np.ndarray, K: np.ndarray, poses: np.ndarray, cfg: dict) -> list[dict]:
    """One box per mask from its own frame's depth, then greedy 3D non-maximum suppression across frames."""
    boxes = []
    for t in make_tracks(masks, depths, K, poses, cfg):
        lo, hi = robust_box(t.points, cfg["box_quantile"])
        boxes.append(
            {
                "cls": next(iter(t.labels)),
                "lo": lo.tolist(),
                "hi": hi.tolist(),
                "views": 1,
                "tier": "low",
                "consistency": 1.0,
                "score": t.scores[0],
            }
        )
    boxes.sort(key=lambda b: -b["score"])
    kept: list[dict] = []
    for b in boxes:
        if kept:
            iou = iou_matrix(
                np.array([b["lo"]]),
                np.array([b["hi"]]),
                np.array([k["lo"] for k in kept]),
                np.array([k["hi"] for k in kept]),
            )[0]
            if np.max(iou) >= cfg["nms_iou"]:
                continue
        kept.append(b)
    return kept
