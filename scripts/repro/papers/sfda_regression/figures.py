"""Stage: target MAE per transfer and method (T1/T2), feature compactness (F2), uncertainty weight against
pseudo-label error (calibration)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json, read_npz


def _bars(metrics: dict, key: str, ylabel: str, path: str) -> None:
    transfers = metrics["transfers"]
    fig, axes = subplots(1, len(transfers), width=3.4)
    for ax, (name, t) in zip(axes[0], transfers.items()):
        methods = list(t["methods"])
        values = [np.asarray(t["methods"][m][key], dtype=float) for m in methods]
        ax.bar(range(len(methods)), [v.mean() for v in values], yerr=[v.std() for v in values], capsize=2)
        ax.set_xticks(range(len(methods)), methods, rotation=60, ha="right", fontsize=6)
        ax.set(title=f"{name} ({t['target']}, {t['shift']})", ylabel=ylabel)
    save(fig, path)


def uncertainty(runs: dict, meta: dict, path: str) -> None:
    shifted = [n for n, t in meta["transfers"].items() if t["shift"] != "none"]
    fig, axes = subplots(1, len(shifted), width=3.0)
    seed = meta["seeds"][0]
    for ax, name in zip(axes[0], shifted):
        key = f"{name}/ddg/{seed}"
        error = np.abs(runs[f"{key}/labels"] - runs[f"{name}/y_target"]) * meta["transfers"][name]["span"]
        ax.scatter(runs[f"{key}/weights"], error, s=3, alpha=0.5)
        ax.set(title=name, xlabel="weight 1 - H(h)/log K", ylabel="|pseudo-label - y| (target units)")
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    _bars(metrics, "mae", "target MAE (target units)", job.output.target_mae)
    _bars(metrics, "compactness", "within / between-bin feature variance", job.output.compactness)
    uncertainty(read_npz(job.input.runs), read_json(job.input.meta), job.output.uncertainty)
