"""Metrics for predicted fields, shared by the operator and nowcasting papers (numpy only).

- ``relative_l2``: per-sample ||pred - true||_2 / ||true||_2 (the FNO papers' metric);
- ``vrmse``: The Well's variance-scaled RMSE per sample and channel,
  sqrt(mean_x (pred - true)^2 / (mean_x (true - mean_x true)^2 + eps)), eps = 1e-7 as in the_well;
- ``contingency``: hits, misses, false alarms and correct negatives at a threshold, optionally after
  max-pooling both fields over non-overlapping ``pool`` x ``pool`` windows (the pooled CSI of the
  DiffCast / Earthformer evaluators); ``scores`` turns counts into CSI, POD, FAR and HSS. Missing observations
  (NaN, e.g. SEVIR's missing-data code) are left out of the counts: a pooled window with a missing pixel is
  left out whole. ``event_counts`` gives the counts per sample, threshold and lead in one pass.
Each is checked in tests/test_fields_metrics.py against a direct formula and scikit-learn.
"""

from __future__ import annotations

import numpy as np

VRMSE_EPS = 1e-7


def relative_l2(pred: np.ndarray, true: np.ndarray) -> np.ndarray:
    """Relative L2 error per sample (the first axis); all other axes are flattened."""
    pred = np.asarray(pred, float).reshape(len(pred), -1)
    true = np.asarray(true, float).reshape(len(true), -1)
    return np.linalg.norm(pred - true, axis=1) / np.linalg.norm(true, axis=1)


def vrmse(pred: np.ndarray, true: np.ndarray, spatial_axes: int = 2) -> np.ndarray:
    """VRMSE over the trailing ``spatial_axes`` axes (shape of the leading axes is kept)."""
    pred, true = np.asarray(pred, float), np.asarray(true, float)
    axes = tuple(range(-spatial_axes, 0))
    mse = np.mean((pred - true) ** 2, axis=axes)
    var = np.mean((true - np.mean(true, axis=axes, keepdims=True)) ** 2, axis=axes)
    return np.sqrt(mse / (var + VRMSE_EPS))


def max_pool(fields: np.ndarray, pool: int) -> np.ndarray:
    """Max over non-overlapping pool x pool windows of the two trailing axes (a partial edge is dropped)."""
    if pool == 1:
        return fields
    *lead, h, w = fields.shape
    h2, w2 = h // pool, w // pool
    cropped = fields[..., : h2 * pool, : w2 * pool]
    return cropped.reshape(*lead, h2, pool, w2, pool).max(axis=(-1, -3))


def contingency(pred: np.ndarray, obs: np.ndarray, threshold: float, pool: int = 1) -> dict[str, float]:
    """Counts H, M, F, CN over all entries of (pooled) fields binarised at ``>= threshold``."""
    pooled = max_pool(np.asarray(obs, float), pool)
    valid = np.isfinite(pooled)
    p = max_pool(np.asarray(pred, float), pool) >= threshold
    o = pooled >= threshold
    return {
        "hits": float(np.sum(p & o & valid)),
        "misses": float(np.sum(~p & o & valid)),
        "false_alarms": float(np.sum(p & ~o & valid)),
        "correct_negatives": float(np.sum(~p & ~o & valid)),
    }


def event_counts(pred: np.ndarray, obs: np.ndarray, thresholds: list[float], pool: int = 1) -> np.ndarray:
    """Counts (sample, threshold, lead, 4: hits, misses, false alarms, correct negatives) of (sample, lead, y, x)
    fields, the same definitions as :func:`contingency` (missing observations left out)."""
    o_pool = max_pool(np.asarray(obs, float), pool)
    p_pool = max_pool(np.asarray(pred, float), pool)
    valid = np.isfinite(o_pool)
    out = np.zeros((len(o_pool), len(thresholds), o_pool.shape[1], 4))
    for i, thr in enumerate(thresholds):
        p, o = p_pool >= thr, o_pool >= thr
        for k, cell in enumerate((p & o, ~p & o, p & ~o, ~p & ~o)):
            out[:, i, :, k] = np.sum(cell & valid, axis=(-2, -1))
    return out


def csi_from_counts(counts: np.ndarray) -> np.ndarray:
    """CSI = H / (H + M + F) over the last axis of counts (..., 4); NaN where H + M + F = 0."""
    h, m, f = counts[..., 0], counts[..., 1], counts[..., 2]
    den = h + m + f
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, h / np.where(den > 0, den, 1), np.nan)


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else float("nan")


def scores(counts: dict[str, float]) -> dict[str, float]:
    """CSI = H/(H+M+F), POD = H/(H+M), FAR = F/(H+F), HSS = 2(H CN - M F)/((H+M)(M+CN) + (H+F)(F+CN))."""
    h, m, f, cn = (counts[k] for k in ("hits", "misses", "false_alarms", "correct_negatives"))
    return {
        "csi": _ratio(h, h + m + f),
        "pod": _ratio(h, h + m),
        "far": _ratio(f, h + f),
        "hss": _ratio(2 * (h * cn - m * f), (h + m) * (m + cn) + (h + f) * (f + cn)),
    }


def skill_by_lead(pred: np.ndarray, obs: np.ndarray, thresholds: list[float], pools: list[int]) -> dict:
    """Scores per pool, threshold and lead time, counts pooled over all samples (pred/obs: sample, lead, y, x).

    Returns ``{f"pool{p}": {str(threshold): {"csi": [per lead], "pod": [...], "far": [...], "hss": [...]}}}``.
    """
    out: dict = {}
    for pool in pools:
        per_pool = {}
        for thr in thresholds:
            per_lead = [scores(contingency(pred[:, t], obs[:, t], thr, pool)) for t in range(obs.shape[1])]
            per_pool[f"{thr:g}"] = {k: [s[k] for s in per_lead] for k in ("csi", "pod", "far", "hss")}
        out[f"pool{pool}"] = per_pool
    return out


def csi_m(skill: dict, pool: int = 1) -> float:
    """CSI-M: per-lead CSI averaged over lead times, then over thresholds (DiffCast's aggregation)."""
    return float(np.mean([np.mean(v["csi"]) for v in skill[f"pool{pool}"].values()]))
