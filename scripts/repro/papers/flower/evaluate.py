"""Stage: VRMSE (next step and rollout) per task, model and seed; displacement-velocity cosines; SelfWarp
forward-time slope; metrics.json and claims.json."""

from __future__ import annotations

import numpy as np

from repro.metrics.fields import vrmse
from repro.papers.flower.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json, write_json

TASKS = ("advection", "wave", "burgers")


def spatial_axes(truth: np.ndarray) -> int:
    return 1 if truth.shape[-2] == 1 else 2


def head_cosines(displacement: np.ndarray, velocity: np.ndarray, cells_per_frame: float) -> list[float]:
    """Cosine between each head's displacement field and -velocity * dt (both in cells), over all points."""
    target = -(velocity * cells_per_frame).ravel()
    out = []
    for h in range(displacement.shape[1]):
        d = displacement[:, h].ravel()
        norm = np.linalg.norm(d) * np.linalg.norm(target)
        out.append(float(d @ target / norm) if norm > 0 else 0.0)
    return out


def summarise(preds: dict[str, np.ndarray], training: dict) -> dict:
    next_step: dict = {}
    rollout: dict = {}
    rollout_curve: dict = {}
    for task in TASKS:
        truth = preds[f"{task}/truth"][:, 1:]
        axes = spatial_axes(truth)
        next_step[task], rollout[task], rollout_curve[task] = {}, {}, {}
        keys = sorted({k.rsplit("/", 1)[0] for k in preds if k.startswith(f"{task}/") and k.endswith("/next")})
        for key in keys:
            _, model, seed = key.split("/")
            errors = vrmse(preds[f"{key}/next"], truth, axes)  # (sample, step, channel)
            roll = vrmse(preds[f"{key}/rollout"], truth, axes)
            next_step[task].setdefault(model, {})[seed] = float(np.mean(errors))
            rollout[task].setdefault(model, {})[seed] = float(np.mean(roll))
            rollout_curve[task].setdefault(model, {})[seed] = np.mean(roll, axis=(0, 2)).tolist()
    cosines = {
        k.split("/")[2]: head_cosines(preds[k], preds["advection/velocity"], float(preds["advection/frame_dt_cells"]))
        for k in preds
        if k.endswith("/displacement")
    }
    times = training["forward_times"]
    slope = float(np.polyfit(np.log(times["points"]), np.log(times["seconds"]), 1)[0])
    return {
        "vrmse_next_step": next_step,
        "vrmse_rollout": rollout,
        "rollout_curve": rollout_curve,
        "displacement_cosines": cosines,
        "forward_time_slope": slope,
        "forward_times": times,
        "checks": training["checks"],
        "parameters": training["parameters"],
    }


def main(job) -> None:
    metrics = summarise(load_arrays(job.input.predictions), read_json(job.input.training))
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "flower", claims)
