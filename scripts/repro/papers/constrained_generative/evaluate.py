"""Stage: project every model's samples back onto its manifold; constraint violation before and after,
MMD^2 and sliced W2 against held-out on-manifold data, flow stability; the perturbation's exact checks."""

from __future__ import annotations

import numpy as np

from repro.papers.constrained_generative.claims import CLAIMS
from repro.papers.constrained_generative.manifolds import manifold
from repro.papers.constrained_generative.metrics import (
    directions,
    divergence_rate,
    median_bandwidth,
    mmd2,
    perturbation_checks,
    sliced_w2_per_direction,
)
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_npz, write_json

CHECK_POINTS = 500


def violation(geom, x: np.ndarray) -> tuple[float, float]:
    if not np.all(np.isfinite(x)):
        return float("nan"), float("nan")
    norms = np.linalg.norm(geom.h(x), axis=1)
    return float(np.mean(norms)), float(np.median(norms))


def score_run(geom, samples: np.ndarray, x_test: np.ndarray, bandwidth: float, dirs: np.ndarray, steps: int) -> dict:
    """Per seed: violation before and after projection, MMD^2 and sliced W2 after it; and, per slicing
    direction, W2^2 averaged over seeds (``sw2_per_direction``, the learning checks' per-item errors; sliced
    W2 of a seed is the square root of its directions' mean)."""
    per_seed = {k: [] for k in ("violation_before", "violation_before_median", "violation_after", "mmd2", "sw2")}
    directions_w2 = []
    for x in samples.astype(np.float64):
        finite = np.all(np.isfinite(x))
        projected = geom.project(x, steps) if finite else x
        before, before_median = violation(geom, x)
        per_seed["violation_before"].append(before)
        per_seed["violation_before_median"].append(before_median)
        per_seed["violation_after"].append(violation(geom, projected)[0])
        per_seed["mmd2"].append(mmd2(projected, x_test, bandwidth))
        directions_w2.append(sliced_w2_per_direction(projected, x_test, dirs))
        per_seed["sw2"].append(float(np.sqrt(np.mean(directions_w2[-1]))))
    per_seed["sw2_per_direction"] = np.mean(directions_w2, axis=0).tolist()
    return per_seed


def per_direction(geom, samples: np.ndarray, x_test: np.ndarray, dirs: np.ndarray, steps: int) -> list[float]:
    """Per slicing direction, W2^2 to held-out data of the projected samples, averaged over seeds."""
    rows = []
    for x in samples.astype(np.float64):
        projected = geom.project(x, steps) if np.all(np.isfinite(x)) else x
        rows.append(sliced_w2_per_direction(projected, x_test, dirs))
    return np.mean(rows, axis=0).tolist()


def main(job) -> None:
    settings = job.params.settings
    runs = read_npz(job.input.runs)
    metrics = {"sigma": settings["sigma"], "seeds": settings["seeds"], "tasks": {}}
    for name in settings["tasks"]:
        path = getattr(job.input, name)
        task = read_npz(path)
        geom = manifold(name)
        x_test = task["x_test"].astype(np.float64)
        bandwidth = median_bandwidth(x_test)
        dirs = directions(geom.d, int(settings["sw_projections"]), int(settings["data_seed"]))
        out = {
            "bandwidth": bandwidth,
            "checks": perturbation_checks(
                geom, task["x_train"][:CHECK_POINTS], settings["check_sigmas"], int(settings["data_seed"])
            ),
            "reference_mmd2": mmd2(task["x_train"][: len(x_test)].astype(np.float64), x_test, bandwidth),
        }
        for kind in settings["model_kinds"]:
            for perturbation in settings["perturbations"]:
                key = f"{name}__{kind}__{perturbation}"
                if f"{key}__samples" not in runs:
                    raise InputError(job.input.runs, f"missing run {key}")
                run = score_run(
                    geom, runs[f"{key}__samples"], x_test, bandwidth, dirs, int(settings["projection_steps"])
                )
                history = runs[f"{key}__history"]
                diverged = int(runs[f"{key}__diverged"])
                run["diverged_epoch"] = diverged
                run["held_out_loss"] = runs[f"{key}__test_loss"].tolist()
                run["divergence_rate"] = [
                    divergence_rate(history[:, s] if diverged < 0 else [np.nan], float(settings["divergence_cap"]))
                    for s in range(len(settings["seeds"]))
                ]
                run["history"] = history.T.tolist()
                steps = int(settings["projection_steps"])
                run["init_sw2_per_direction"] = per_direction(geom, runs[f"{key}__init_samples"], x_test, dirs, steps)
                if f"{key}__normal_gain" in runs:
                    run["normal_gain"] = runs[f"{key}__normal_gain"].tolist()
                out[f"{kind}__{perturbation}"] = run
        metrics["tasks"][name] = out
    write_json(job.output.metrics, metrics)
    reported = load_reported(job.input.reported)
    write_claims(
        job.output.claims, "constrained-generative", evaluate_claims(CLAIMS, metrics, job.params.scale, reported)
    )
