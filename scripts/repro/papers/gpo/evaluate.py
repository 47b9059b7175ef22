"""Stage: relative L2 per model, task and resolution, irregular-subset errors, forward-time slopes;
metrics.json and claims.json."""

from __future__ import annotations

import numpy as np

from repro.metrics.fields import relative_l2
from repro.papers.gpo.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json, write_json

TASKS = ("darcy", "ns")


def loglog_slope(points: list[float], seconds: list[float]) -> float:
    """Least-squares slope of log(time) against log(N)."""
    return float(np.polyfit(np.log(points), np.log(seconds), 1)[0])


def timing(times: dict, seed: int) -> dict:
    """Slope of the fastest repeat's time per N (the cost least disturbed by other load), and its percentile
    bootstrap over repeats (resampled per N)."""
    runs = np.asarray(times["seconds"], float)  # (N, repeat)
    rng = np.random.default_rng([seed, 3])
    boot = [
        loglog_slope(times["points"], np.min(runs[:, rng.integers(0, runs.shape[1], runs.shape[1])], axis=1))
        for _ in range(500)
    ]
    return {"slope": loglog_slope(times["points"], np.min(runs, axis=1)), "bootstrap": boot}


def summarise(preds: dict[str, np.ndarray], training: dict, seed: int = 0) -> dict:
    models = sorted({k.split("/")[1] for k in preds if k.count("/") == 2 and "/truth/" not in k})
    errors: dict = {}
    for task in TASKS:
        errors[task] = {}
        truth_sub = np.take_along_axis(
            preds[f"{task}/truth/lo"].reshape(len(preds[f"{task}/irregular_index"]), -1),
            preds[f"{task}/irregular_index"],
            axis=1,
        )
        for model in models:
            entry = {
                res: relative_l2(preds[f"{task}/{model}/{res}"], preds[f"{task}/truth/{res}"]).tolist()
                for res in ("lo", "hi")
                if f"{task}/{model}/{res}" in preds
            }
            if f"{task}/{model}/irregular" in preds:
                entry["irregular"] = relative_l2(preds[f"{task}/{model}/irregular"], truth_sub).tolist()
                full_sub = np.take_along_axis(
                    preds[f"{task}/{model}/lo"].reshape(len(truth_sub), -1), preds[f"{task}/irregular_index"], axis=1
                )
                entry["full_grid_at_subset"] = relative_l2(full_sub, truth_sub).tolist()
            errors[task][model] = entry
    mean_errors = {
        t: {m: {r: float(np.mean(v)) for r, v in e.items()} for m, e in per.items()} for t, per in errors.items()
    }
    times = training["forward_times"]
    return {
        "relative_l2": errors,
        "mean_relative_l2": mean_errors,
        "grids": {t: {r: int(np.sqrt(preds[f"{t}/truth/{r}"][0].size)) for r in ("lo", "hi")} for t in TASKS},
        "forward_time_slope": {name: timing(v, seed)["slope"] for name, v in times.items()},
        "forward_time": {name: timing(v, seed) for name, v in times.items()},
        "forward_times": times,
        "checks": training["checks"],
        "parameters": training["parameters"],
        "final_train_loss": {k: v[-1]["loss"] for k, v in training["history"].items()},
    }


def main(job) -> None:
    metrics = summarise(load_arrays(job.input.predictions), read_json(job.input.training), int(job.params.seed))
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "gpo", claims)
