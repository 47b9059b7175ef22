"""Stage: Chamfer distance and F-score on the held-out shapes per mode and seed, memory and time per step,
carving's checks; metrics.json and claims.json.

Chamfer: mean nearest-neighbour Euclidean distance from predicted to ground-truth surface points plus the
reverse (L1 Chamfer, unit-cube coordinates: shapes span [-extent, extent], no scaling). F-score at ``tau``:
harmonic mean of the share of predicted points within tau of the ground truth and the reverse.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from repro.papers.focusing.carving import MODES
from repro.papers.focusing.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import InputError, read_json, write_json


def chamfer_fscore(pred: np.ndarray, true: np.ndarray, tau: float) -> tuple[float, float]:
    """(L1 Chamfer, F-score at tau); an empty prediction gives (NaN, 0)."""
    if len(pred) == 0:
        return float("nan"), 0.0
    d_pred = cKDTree(true).query(pred)[0]
    d_true = cKDTree(pred).query(true)[0]
    precision, recall = float(np.mean(d_pred < tau)), float(np.mean(d_true < tau))
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return float(np.mean(d_pred) + np.mean(d_true)), f


def main(job) -> None:
    settings = job.params.settings
    shapes, runs = load_arrays(job.input.shapes), load_arrays(job.input.runs)
    training, manifest = read_json(job.input.training), read_json(job.input.manifest)
    tests = [str(n) for n, s in zip(shapes["names"], shapes["split"]) if s == "test"]
    per_mode: dict[str, dict] = {}
    for mode in MODES:
        seeds = {}
        for s in settings["seeds"]:
            rows = {}
            for name in tests:
                key = f"{mode}/s{s}/{name}"
                if key not in runs:
                    raise InputError(job.input.runs, f"missing prediction {key}")
                cd, f = chamfer_fscore(runs[key], shapes[f"{name}/points"], settings["fscore_tau"])
                rows[name] = {"chamfer": cd, "fscore": f, "points": int(len(runs[key]))}
            bench = training["benchmark"][f"{mode}/s{s}"]
            seeds[f"s{s}"] = {
                "chamfer": float(np.mean([r["chamfer"] for r in rows.values()])),
                "fscore": float(np.mean([r["fscore"] for r in rows.values()])),
                "shapes": rows,
            } | bench
        per_mode[mode] = {"seeds": seeds}
    stats = {r["name"]: r["modes"] for r in manifest["shapes"]}
    checks = {mode: float(np.max(runs[f"check/{mode}/removed_minus_zeroed"])) for mode in MODES if mode != "dense"}
    metrics = {
        "modes": per_mode,
        "shapes": stats,
        "surface_kept_min": {
            m: float(np.min([s[m]["surface_kept"] for s in stats.values()])) for m in ("carved", "focusing")
        },
        "active_cells": {m: float(np.mean([s[m]["active"] for s in stats.values()])) for m in MODES},
        "dense_minus_carved_min": float(np.min([s["dense"]["active"] - s["carved"]["active"] for s in stats.values()])),
        "zoom_in_target_fraction": float(np.mean([s["focusing"]["in_target"] for s in stats.values()])),
        "zoom_cells": {n: s["focusing"]["cells"] for n, s in stats.items()},
        "removed_minus_zeroed_max": float(np.max(list(checks.values()))),
        "target_active": manifest["settings"]["shapes"]["target_active"],
        "fscore_tau": settings["fscore_tau"],
    }
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "focusing", claims)
