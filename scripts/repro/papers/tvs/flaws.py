"""Flawed-segment detection: segment scores from frame scores, and AUROC."""

from __future__ import annotations

import numpy as np


def segments(frame_tvs: list, frame_acc: list, frames: list, mask: np.ndarray, length: int) -> dict:
    """Fixed-length segments of every clip: label = any flawed frame, score = the largest frame score inside (TVS on
    its scored frames, acceleration on all frames), with the clip index for bootstrapping over clips."""
    out = {"clip": [], "label": [], "tvs": [], "acceleration": []}
    for i, (ft, fa, fr) in enumerate(zip(frame_tvs, frame_acc, frames, strict=True)):
        ft, fa, fr = np.asarray(ft), np.asarray(fa), np.asarray(fr)
        for start in range(0, mask.shape[1] - length + 1, length):
            inside = (fr >= start) & (fr < start + length)
            if not inside.any():
                continue
            out["clip"].append(i)
            out["label"].append(bool(mask[i, start : start + length].any()))
            out["tvs"].append(float(ft[inside].max()))
            out["acceleration"].append(float(fa[start : start + length].max()))
    return out


def auroc(labels, scores) -> float:
    """Area under the ROC curve (Mann-Whitney form, ties count half); NaN without both classes."""
    y, x = np.asarray(labels, dtype=bool), np.asarray(scores, dtype=float)
    pos, neg = x[y], x[~y]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    greater = (pos[:, None] > neg[None]).sum() + 0.5 * (pos[:, None] == neg[None]).sum()
    return float(greater / (len(pos) * len(neg)))
