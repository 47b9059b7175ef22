"""Stage: accuracy matrices per method (F1), BWT against N, T and E (F2), gradient norm per round (F3)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

AXES = {"per_round": "clients per round N", "rounds": "rounds per task T", "local_epochs": "local epochs E"}


def accuracy_matrices(metrics: dict, path: str) -> None:
    names = list(metrics["final_accuracy_matrix"])
    fig, axes = subplots(1, len(names), width=2.2, height=2.3)
    for ax, name in zip(axes[0], names):
        a = np.asarray(metrics["final_accuracy_matrix"][name])
        ax.imshow(a, vmin=0, vmax=1, cmap="viridis")
        ax.set(title=name, xlabel="evaluated task (index)", ylabel="after training task (index)")
        for (j, i), v in np.ndenumerate(a):
            ax.text(i, j, f"{v:.2f}", ha="center", va="center", fontsize=5, color="w")
    save(fig, path)


def bwt_sweeps(metrics: dict, path: str) -> None:
    sweeps = metrics["sweeps"]
    fig, axes = subplots(1, len(sweeps), width=3.0)
    for ax, (key, rows) in zip(axes[0], sweeps.items()):
        bwt = np.asarray(rows["special"], dtype=float)
        ax.errorbar(rows["values"], bwt.mean(1), yerr=bwt.std(1), marker="o", ms=3, capsize=2)
        ax.set(xlabel=AXES[key], xscale="log")
        ax.set_xticks(rows["values"], [str(v) for v in rows["values"]])
        ax.minorticks_off()
    axes[0][0].set_ylabel("SPECIAL backward transfer (change in fraction correct)")
    save(fig, path)


def gradient_norm(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.5)
    ax = axes[0][0]
    for name in ("fedavg", metrics["main_method"], "fedprox", "replay"):
        g = np.asarray(metrics["grad_norm_mean"][name]).reshape(-1)
        ax.semilogy(np.arange(1, g.size + 1), g, label=name)
    ax.set(
        xlabel="communication round (count, tasks in sequence)",
        ylabel="||grad F(w_t)|| on the current task (loss units)",
    )
    ax.legend()
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    accuracy_matrices(metrics, job.output.accuracy_matrices)
    bwt_sweeps(metrics, job.output.bwt_sweeps)
    gradient_norm(metrics, job.output.gradient_norm)
