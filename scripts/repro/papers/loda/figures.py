"""Stage: A_last and forgetting per method (main table and ablations), energy shares of the bases (premise),
mean accuracy matrices per method."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json


def accuracy(metrics: dict, path: str) -> None:
    methods = list(metrics["methods"])
    fig, axes = subplots(1, 2, width=4.2)
    for ax, key, label in zip(
        axes[0],
        ("a_last", "forgetting"),
        ("A_last (fraction correct, all tasks after the last)", "forgetting (drop in fraction correct)"),
    ):
        values = [np.asarray(metrics["methods"][m][key], dtype=float) for m in methods]
        ax.bar(range(len(methods)), [np.nanmean(v) for v in values], yerr=[np.nanstd(v) for v in values], capsize=2)
        ax.set_xticks(range(len(methods)), methods, rotation=60, ha="right", fontsize=6)
        ax.set(ylabel=label)
    save(fig, path)


def energy(metrics: dict, path: str) -> None:
    e = metrics["energy"]
    bases = ("general", "isolated", "null")
    fig, axes = subplots(1, 2, width=3.4)
    share = [np.asarray(e[f"new_share_{b}"], dtype=float) for b in bases]
    axes[0][0].bar(bases, [s.mean() for s in share], yerr=[s.std() for s in share], capsize=2)
    axes[0][0].set(ylabel="share of best rank-r new-task energy")
    ratio = [np.asarray(e[f"new_old_ratio_{b}"], dtype=float) for b in bases]
    axes[0][1].bar(bases, [r.mean() for r in ratio], yerr=[r.std() for r in ratio], capsize=2)
    axes[0][1].set(ylabel="new / old energy (median over layers, tasks)", yscale="log")
    save(fig, path)


def accuracy_matrices(metrics: dict, path: str) -> None:
    names = list(metrics["accuracy_matrix"])
    fig, axes = subplots(1, len(names), width=2.0, height=2.2)
    for ax, name in zip(axes[0], names):
        ax.imshow(np.asarray(metrics["accuracy_matrix"][name]), vmin=0, vmax=1, cmap="viridis")
        ax.set(title=name, xlabel="evaluated task (index)", ylabel="after training task (index)")
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    accuracy(metrics, job.output.accuracy)
    energy(metrics, job.output.energy)
    accuracy_matrices(metrics, job.output.accuracy_matrices)
