"""Stage: Chamfer distance and F-score on the held-out shapes per mode, seed and shape (and for the untrained
initialisation), memory and time per training step, carving's checks; metrics.json and claims.json.

Chamfer: mean nearest-neighbour Euclidean distance from predicted to ground-truth surface points plus the
reverse (L1 Chamfer, unit-cube coordinates: shapes span [-extent, extent], no scaling). F-score at ``tau``:
harmonic mean of the share of predicted points within tau of the ground truth and the reverse. An empty
prediction scores the largest distance in the cube (2 sqrt 3) and F-score 0, so it counts as a failure instead
of vanishing from the means.

``items`` lists, per mode, the per-(seed, shape) errors in one fixed order, so that claims pair them.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from repro.papers.focusing.claims import CLAIMS
from repro.papers.focusing.modes import MODES
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import InputError, read_json, write_json

EMPTY_CHAMFER = 2 * np.sqrt(3.0)


def chamfer_fscore(pred: np.ndarray, true: np.ndarray, tau: float) -> tuple[float, float]:
    """(L1 Chamfer, F-score at tau); an empty prediction gives (2 sqrt 3, 0)."""
    if len(pred) == 0:
        return EMPTY_CHAMFER, 0.0
    d_pred = cKDTree(true).query(pred)[0]
    d_true = cKDTree(pred).query(true)[0]
    precision, recall = float(np.mean(d_pred < tau)), float(np.mean(d_true < tau))
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return float(np.mean(d_pred) + np.mean(d_true)), f


def score(runs: dict, shapes: dict, tests: list[str], prefix: str, seeds: list[int], tau: float, path) -> dict:
    """Per seed and shape the Chamfer and F-score of the predictions stored under ``prefix``."""
    out = {}
    for s in seeds:
        rows = {}
        for name in tests:
            key = f"{prefix}/s{s}/{name}"
            if key not in runs:
                raise InputError(path, f"missing prediction {key}")
            cd, f = chamfer_fscore(runs[key], shapes[name], tau)
            rows[name] = {"chamfer": cd, "fscore": f, "points": int(len(runs[key]))}
        out[f"s{s}"] = {
            "chamfer": float(np.mean([r["chamfer"] for r in rows.values()])),
            "fscore": float(np.mean([r["fscore"] for r in rows.values()])),
            "shapes": rows,
        }
    return out


def items(per_seed: dict, key: str) -> list[float]:
    return [row[key] for seed in per_seed.values() for row in seed["shapes"].values()]


def main(job) -> None:
    settings = job.params.settings
    manifest = read_json(job.input.manifest)
    runs: dict[str, np.ndarray] = {}
    trainings = {}
    for path_runs, path_training in zip(job.input.runs, job.input.training):
        part = load_arrays(path_runs)
        report = read_json(path_training)
        trainings[int(report["seed"])] = report
        runs |= {k: v for k, v in part.items() if not k.startswith("check/")}
        runs[f"check/s{report['seed']}"] = part["check/removed_minus_zeroed"]
    index = read_json(f"{job.input.shapes}/index.json")
    tests = [n for n, s in zip(index["names"], index["split"]) if s == "test"]
    truth = {}
    for name in tests:
        with np.load(f"{job.input.shapes}/{name}.npz") as content:
            truth[name] = content["points"]
    tau, seeds = settings["fscore_tau"], settings["seeds"]
    scored = {m: score(runs, truth, tests, m, seeds, tau, job.input.runs) for m in (*MODES, "untrained")}
    bench = {}
    for mode in MODES:
        missing = [s for s in seeds if s not in trainings]
        if missing:
            raise InputError(job.input.training[0], f"no training report for seeds {missing}")
        per_seed = [trainings[s]["benchmark"][mode] for s in seeds]
        bench[mode] = {k: [v for b in per_seed for v in b[k]] for k in per_seed[0]}
    peaks = [v for b in bench.values() for v in b["cuda_peak_bytes"]]
    stats = {r["name"]: r["active_cells"] for r in manifest["shapes"] if r["split"] == "train"}
    metrics = {
        "modes": {m: {"seeds": scored[m]} for m in MODES},
        "untrained": {"seeds": scored["untrained"]},
        "items": {m: {k: items(scored[m], k) for k in ("chamfer", "fscore")} for m in scored},
        "benchmark": bench,
        "memory_measure": "cuda_peak_bytes" if peaks and all(p is not None for p in peaks) else "saved_bytes",
        "shapes": stats,
        "active_cells": {k: float(np.mean([s[k] for s in stats.values()])) for k in ("carved", "frustum", "sectional")},
        "visible_surface_kept_min": float(np.min([s["visible_surface_kept_min"] for s in stats.values()])),
        "carved_within_frustum": float(np.mean([s["carved_within_frustum"] for s in stats.values()])),
        "removed_minus_zeroed_max": float(np.max([runs[f"check/s{s}"] for s in seeds])),
        "refused_meshes": manifest["refused"]["count"],
        "fscore_tau": tau,
    }
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "focusing", claims)
