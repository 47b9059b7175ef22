"""Axis-aligned 3D boxes: IoU and average precision at an IoU threshold (ScanNet-style, per class)."""

from __future__ import annotations

import numpy as np


def iou_matrix(lo_a: np.ndarray, hi_a: np.ndarray, lo_b: np.ndarray, hi_b: np.ndarray) -> np.ndarray:
    """3D IoU of every box of set a (n, 3 corners) with every box of set b (m, 3)."""
    lo = np.maximum(lo_a[:, None], lo_b[None])
    hi = np.minimum(hi_a[:, None], hi_b[None])
    inter = np.prod(np.clip(hi - lo, 0, None), axis=-1)
    vol_a = np.prod(hi_a - lo_a, axis=-1)
    vol_b = np.prod(hi_b - lo_b, axis=-1)
    union = vol_a[:, None] + vol_b[None] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def match(pred: dict, gt: dict, threshold: float) -> np.ndarray:
    """True-positive flags of the predictions in descending confidence: a prediction is a true positive when its
    IoU with a not yet matched ground-truth box of the same class reaches ``threshold``."""
    order = np.argsort(-np.asarray(pred["score"]), kind="stable")
    iou = iou_matrix(
        np.asarray(pred["lo"]).reshape(-1, 3),
        np.asarray(pred["hi"]).reshape(-1, 3),
        np.asarray(gt["lo"]).reshape(-1, 3),
        np.asarray(gt["hi"]).reshape(-1, 3),
    )
    used = np.zeros(len(gt["cls"]), dtype=bool)
    tp = np.zeros(len(order), dtype=bool)
    for rank, i in enumerate(order):
        same = np.array([c == pred["cls"][i] for c in gt["cls"]], dtype=bool) & ~used
        if not same.any():
            continue
        cand = np.where(same, iou[i], -1.0)
        j = int(np.argmax(cand))
        if cand[j] >= threshold:
            used[j] = True
            tp[rank] = True
    return tp


def average_precision(tp: np.ndarray, n_gt: int) -> float:
    """Area under the interpolated precision-recall curve (all-point interpolation, as in ScanNet's and VOC's
    evaluation); NaN when there is no ground truth."""
    if n_gt == 0:
        return float("nan")
    if len(tp) == 0:
        return 0.0
    ctp = np.cumsum(tp)
    recall = ctp / n_gt
    precision = ctp / np.arange(1, len(tp) + 1)
    mrec = np.concatenate([[0.0], recall, [1.0]])
    mpre = np.concatenate([[0.0], precision, [0.0]])
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    step = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[step + 1] - mrec[step]) * mpre[step + 1]))


def columns(instances: list[dict]) -> dict[str, list]:
    """A list of instance dicts as the column dict the matching functions take."""
    return {k: [i[k] for i in instances] for k in ("cls", "lo", "hi", "score")}


def restrict(pred: dict, gt: dict, keep: np.ndarray, threshold: float) -> tuple[dict, dict]:
    """Evaluate on the ground-truth boxes in ``keep`` only: the others become "don't care" regions, and a prediction
    overlapping one of them by IoU >= ``threshold`` (with no kept box it overlaps more) is dropped, not counted
    as a false positive."""
    keep = np.asarray(keep, dtype=bool)
    lo_p, hi_p = np.asarray(pred["lo"]).reshape(-1, 3), np.asarray(pred["hi"]).reshape(-1, 3)
    iou = iou_matrix(lo_p, hi_p, np.asarray(gt["lo"]).reshape(-1, 3), np.asarray(gt["hi"]).reshape(-1, 3))
    best_kept = np.max(np.where(keep[None], iou, 0.0), axis=1, initial=0.0)
    best_other = np.max(np.where(~keep[None], iou, 0.0), axis=1, initial=0.0)
    drop = (best_other >= threshold) & (best_other > best_kept)
    sub_p = {k: [v for v, d in zip(pred[k], drop, strict=True) if not d] for k in ("cls", "lo", "hi", "score")}
    sub_g = {k: [v for v, ok in zip(gt[k], keep, strict=True) if ok] for k in ("cls", "lo", "hi")}
    return sub_p, sub_g


def scene_detection(preds: list[dict], gts: list[dict], threshold: float) -> dict[str, float]:
    """Class-averaged AP, and precision/recall of all kept boxes, over several scenes at one IoU threshold;
    ``preds`` and ``gts`` hold one column dict (see :func:`columns`) per scene."""
    classes = sorted({c for g in gts for c in g["cls"]})
    aps = []
    for cls in classes:
        flags, scores, n_gt = [], [], 0
        for pred, gt in zip(preds, gts, strict=True):
            pi = [i for i, c in enumerate(pred["cls"]) if c == cls]
            gi = [i for i, c in enumerate(gt["cls"]) if c == cls]
            n_gt += len(gi)
            sub_p = {k: [pred[k][i] for i in pi] for k in ("lo", "hi", "score", "cls")}
            sub_g = {k: [gt[k][i] for i in gi] for k in ("lo", "hi", "cls")}
            flags.append(match(sub_p, sub_g, threshold))
            scores.append(np.sort(np.asarray(sub_p["score"], dtype=float))[::-1])
        tp, s = np.concatenate(flags), np.concatenate(scores)
        aps.append(average_precision(tp[np.argsort(-s, kind="stable")], n_gt))
    tp_all = sum(int(match(p, g, threshold).sum()) for p, g in zip(preds, gts, strict=True))
    n_pred = sum(len(p["cls"]) for p in preds)
    n_gt = sum(len(g["cls"]) for g in gts)
    return {
        "ap": float(np.mean(aps)) if aps else float("nan"),
        "precision": tp_all / n_pred if n_pred else 0.0,
        "recall": tp_all / n_gt if n_gt else float("nan"),
    }
