"""Stage: DDG-SFDA's metrics (target MAE in target units, feature compactness, histogram checks, uncertainty
calibration, same-domain stability) per transfer, method and seed, the per-item absolute errors of the learning
checks (each method on the claim transfer's target test set, mean over seeds, against the source labels'
mean), then its claims."""

from __future__ import annotations

import numpy as np
from scipy import stats

from repro.metrics.learning import mae
from repro.papers.sfda_regression.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_json, read_npz, write_json


def compactness(features: np.ndarray, targets: np.ndarray, bins: int) -> float:
    """Mean within-bin feature variance over the variance of the bin centroids (bins of the true targets,
    for evaluation only); lower means features are more compact and ordered by target."""
    which = np.clip((np.clip(targets, 0.0, 1.0) * bins).astype(int), 0, bins - 1)
    used = np.unique(which)
    centroids = np.stack([features[which == b].mean(0) for b in used])
    within = np.mean([((features[which == b] - centroids[i]) ** 2).sum(1).mean() for i, b in enumerate(used)])
    between = ((centroids - centroids.mean(0)) ** 2).sum(1).mean()
    return float(within / between) if between > 0 else float("nan")


def histogram_checks(runs: dict, keys: list[str], bins: int) -> dict:
    centres = (np.arange(bins) + 0.5) / bins
    hist = [runs[f"{k}/histograms"] for k in keys]
    labels = [runs[f"{k}/labels"] for k in keys]
    return {
        "histogram_max_sum_error": float(np.max([np.max(np.abs(h.sum(1) - 1.0)) for h in hist])),
        "histogram_min_value": float(np.min([np.min(h) for h in hist])),
        "label_max_range_violation": float(
            np.max([np.max(np.maximum(centres[0] - lab, lab - centres[-1])) for lab in labels])
        ),
    }


def summarise(runs: dict, meta: dict, settings: dict) -> dict:
    bins = settings["adapt"]["bins"]
    out: dict = {"transfers": {}}
    ddg_keys = []
    for name, transfer in meta["transfers"].items():
        y = runs[f"{name}/y_test"]
        span = transfer["span"]
        methods = sorted({k.split("/")[1] for k in runs if k.startswith(f"{name}/") and k.endswith("/pred")})
        rows = {}
        for method in methods:
            keys = [f"{name}/{method}/{s}" for s in meta["seeds"]]
            rows[method] = {
                "mae": [mae(runs[f"{k}/pred"], y) * span for k in keys],
                "compactness": [compactness(runs[f"{k}/features"], y, bins) for k in keys],
            }
            if f"{keys[0]}/weights" in runs:
                ddg_keys += keys
                rows[method]["weight_error_spearman"] = [
                    float(
                        stats.spearmanr(runs[f"{k}/weights"], np.abs(runs[f"{k}/labels"] - runs[f"{name}/y_target"]))[0]
                    )
                    for k in keys
                ]
        out["transfers"][name] = {k: v for k, v in transfer.items() if k not in ("low",)} | {"methods": rows}
    out["checks"] = histogram_checks(runs, ddg_keys, bins) if ddg_keys else {}
    claim = settings["claim_transfer"]
    y, mean = runs[f"{claim}/y_test"], float(runs[f"{claim}/y_source_mean"])
    out["learning"] = {"trivial": (np.abs(y - mean) * meta["transfers"][claim]["span"]).tolist()}
    for method in out["transfers"][claim]["methods"]:
        preds = [runs[f"{claim}/{method}/{seed}/pred"] for seed in meta["seeds"]]
        out["learning"][method] = (
            np.mean([np.abs(p - y) for p in preds], axis=0) * meta["transfers"][claim]["span"]
        ).tolist()
    same = out["transfers"][settings["sanity_transfer"]]["methods"]
    base = np.asarray(same["source_only"]["mae"], dtype=float)
    out["same_domain_relative_change"] = ((np.asarray(same["ddg"]["mae"], dtype=float) - base) / base).tolist()
    out["claim_transfer"] = settings["claim_transfer"]
    out["readers"] = meta.get("readers", {})
    return out


def main(job) -> None:
    metrics = summarise(read_npz(job.input.runs), read_json(job.input.meta), job.params.settings)
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "sfda-regression", claims)
