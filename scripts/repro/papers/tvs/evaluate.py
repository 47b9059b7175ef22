"""Stage: TVS against tracking error (Spearman per policy and for the competing proxies), DSJE, MID and flawed
segment detection; metrics.json and claims.json."""

from __future__ import annotations

import json

import numpy as np

from repro.metrics.regression import spearman
from repro.papers.tvs.claims import CLAIMS
from repro.papers.tvs.flaws import auroc, segments
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, write_json

PROXIES = ("speed", "acceleration", "jerk", "tvs_p90", "tvs_with_root", "mds_spectral", "mds_variance", "mds_segment")


def _load(path: str, key: str) -> dict:
    try:
        doc = json.loads(open(path).read())
    except (OSError, ValueError) as err:
        raise InputError(path, f"not a JSON file ({err})") from err
    if key not in doc:
        raise InputError(path, f"missing {key!r}")
    return doc


def dsje(tvs: np.ndarray, errors: np.ndarray, groups: np.ndarray, bins: int, names: list[str]) -> dict:
    """Difficulty-stratified joint error: mean body error (mm) per TVS quantile bin, overall and per joint group."""
    edges = np.quantile(tvs, np.linspace(0, 1, bins + 1))
    idx = np.clip(np.searchsorted(edges, tvs, side="right") - 1, 0, bins - 1)
    out = {"edges": edges.tolist(), "all": [float(errors[idx == b].mean()) for b in range(bins)]}
    for g, name in enumerate(names):
        if np.any(groups == g):
            out[name] = [float(errors[idx == b][:, groups == g].mean()) for b in range(bins)]
    return out


def mid(tvs: np.ndarray, failed: np.ndarray, bins: int, threshold: float) -> dict:
    """Maximum Imitable Difficulty: the upper TVS edge of the last quantile bin up to which every bin's success
    rate stays at least ``threshold`` (the lowest TVS when the first bin already falls short)."""
    edges = np.quantile(tvs, np.linspace(0, 1, bins + 1))
    idx = np.clip(np.searchsorted(edges, tvs, side="right") - 1, 0, bins - 1)
    success = [float(np.mean(~failed[idx == b])) for b in range(bins)]
    ok = np.cumprod(np.array(success) >= threshold).astype(bool)
    value = float(edges[int(np.flatnonzero(ok)[-1]) + 1]) if ok.any() else float(edges[0])
    return {"edges": edges.tolist(), "success": success, "mid": value}


def summarise(scores: dict, tracking: dict, flaw_mask: np.ndarray, s: dict) -> dict:
    clips = scores["clips"]
    tvs = np.array([c["tvs"] for c in clips])
    groups = np.array(tracking["body_group"])
    ev = s["evaluate"]
    policies = {}
    for name, runs in tracking["policies"].items():
        mpjpe = np.array([r["mpjpe_mm"] for r in runs])
        failed = np.array([r["failed"] for r in runs])
        errors = np.array([r["body_error_mm"] for r in runs])
        policies[name] = {
            "mpjpe_mm": mpjpe.tolist(),
            "failed": failed.tolist(),
            "success_rate": float(np.mean(~failed)),
            "spearman_tvs": spearman(tvs, mpjpe),
            "spearman_proxies": {p: spearman([c[p] for c in clips], mpjpe) for p in PROXIES},
            "dsje": dsje(tvs, errors, groups, ev["bins"], tracking["group_names"]),
            "mid": mid(tvs, failed, ev["bins"], ev["success_threshold"]),
        }
    seg = segments(
        [c["frame_tvs"] for c in clips],
        [c["frame_acceleration"] for c in clips],
        [c["frames"] for c in clips],
        flaw_mask,
        ev["segment_frames"],
    )
    return {
        "tvs": tvs.tolist(),
        "proxies": {p: [c[p] for c in clips] for p in PROXIES},
        "policies": policies,
        "primary_policy": ev["primary_policy"],
        "flaw_segments": seg,
        "flaw_auroc": {
            "tvs": auroc(seg["label"], seg["tvs"]),
            "acceleration": auroc(seg["label"], seg["acceleration"]),
        },
        "checks": scores["checks"],
    }


def main(job) -> None:
    from repro.papers.tvs.store import KEYS

    scores = _load(job.input.scores, "clips")
    tracking = _load(job.input.tracking, "policies")
    with np.load(job.input.motions) as z:
        if "flaw_mask" not in z:
            raise InputError(job.input.motions, f"missing flaw_mask (expected arrays {KEYS})")
        mask = z["flaw_mask"]
    metrics = summarise(scores, tracking, mask, job.params.settings)
    write_json(job.output.metrics, metrics)
    write_claims(
        job.output.claims, "tvs", evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    )
