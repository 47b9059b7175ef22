"""Stage: target MAE per transfer and method (T1/T2), feature compactness (F2), uncertainty weight against
pseudo-label error (calibration)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json, read_npz

LABELS = {
    "source_only": "source only",
    "self_training": "self-training",
    "feature_alignment": "feature alignment",
    "tasfar": "TASFAR-style",
    "ddg": "DDG-SFDA",
    "ddg_no_aux": "DDG, no aux head",
    "ddg_no_weight": "DDG, no weighting",
    "oracle": "oracle (target labels)",
}


def describe(t: dict) -> str:
    if "dataset" in t:
        return f"{t['dataset']} {t['factor']}, {t['source_domain']} -> {t['target_domain']}"
    return f"{t['target']}, {t['shift']}"


def shifted(t: dict) -> bool:
    return t["source_domain"] != t["target_domain"] if "dataset" in t else t["shift"] != "none"


def _bars(metrics: dict, key: str, ylabel: str, path: str) -> None:
    transfers = metrics["transfers"]
    fig, axes = subplots(1, len(transfers), width=3.4)
    for ax, (name, t) in zip(axes[0], transfers.items()):
        methods = [m for m in LABELS if m in t["methods"]]
        values = [np.asarray(t["methods"][m][key], dtype=float) for m in methods]
        colours = ["C3" if m == "ddg" else "C7" if m == "oracle" else "C0" for m in methods]
        ax.bar(
            range(len(methods)), [v.mean() for v in values], yerr=[v.std() for v in values], capsize=2, color=colours
        )
        ax.set_xticks(range(len(methods)), [LABELS[m] for m in methods], rotation=60, ha="right", fontsize=6)
        ax.set(title=f"{name}\n({describe(t)})", ylabel=ylabel)
        ax.title.set_fontsize(7)
    save(fig, path)


def uncertainty(runs: dict, meta: dict, path: str) -> None:
    names = [n for n, t in meta["transfers"].items() if shifted(t)]
    fig, axes = subplots(1, len(names), width=3.0)
    seed = meta["seeds"][0]
    for ax, name in zip(axes[0], names):
        key = f"{name}/ddg/{seed}"
        error = np.abs(runs[f"{key}/labels"] - runs[f"{name}/y_target"]) * meta["transfers"][name]["span"]
        ax.scatter(runs[f"{key}/weights"], error, s=3, alpha=0.5)
        ax.set(title=name, xlabel="DDG weight 1 - H(h)/log K (unitless)", ylabel="|pseudo-label - y| (target units)")
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    _bars(metrics, "mae", "target MAE (target units: degrees, pixels, ...)", job.output.target_mae)
    _bars(metrics, "compactness", "within / between-bin feature variance (ratio)", job.output.compactness)
    uncertainty(read_npz(job.input.runs), read_json(job.input.meta), job.output.uncertainty)
