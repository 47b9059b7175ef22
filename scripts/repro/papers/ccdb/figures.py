"""Rule entry ``ccdb_figures``: (F1) worst-group and unbiased test accuracy per method at the main bias ratio;
(F2) unbiased accuracy against the bias ratio for ERM and CCDB; (F3) CCDB's weight mass per (class, colour)
group of the training set."""

from __future__ import annotations

import numpy as np

from repro.reporting import plotting
from repro.workflow.io import read_json, read_npz

LABELS = {"erm": "ERM", "ccdb": "CCDB", "jtt": "JTT", "group_balanced": "group-balanced*", "group_dro": "GroupDRO*"}


def accuracy(metrics: dict, path: str) -> None:
    main = metrics["ratios"][metrics["main"]]
    methods = [k for k in LABELS if k in main]
    fig, axes = plotting.subplots(1, 2, width=3.2, height=2.7, layout="constrained")
    for ax, key, title in zip(axes[0], ("worst_group", "unbiased"), ("worst-group", "unbiased (mean of groups)")):
        values = [np.asarray(main[m][key]) for m in methods]
        ax.bar(
            range(len(methods)),
            [v.mean() for v in values],
            yerr=[v.std() for v in values],
            color=[plotting.PALETTE[i] for i in range(len(methods))],
            capsize=2,
        )
        ax.set_xticks(range(len(methods)), [LABELS[m] for m in methods], rotation=45, ha="right")
        ax.set_ylabel(f"{title} test accuracy (fraction)")
    axes[0][0].set_title(f"rho = {main['ratio']}; * uses group labels", fontsize=8)
    plotting.save(fig, path)


def ratios(metrics: dict, path: str) -> None:
    fig, axes = plotting.subplots(1, 1, width=3.4, height=2.7, layout="constrained")
    ax = axes[0][0]
    entries = sorted(metrics["ratios"].values(), key=lambda r: r["ratio"])
    for i, method in enumerate(("erm", "ccdb")):
        rhos = [r["ratio"] for r in entries if method in r]
        vals = [np.asarray(r[method]["unbiased"]) for r in entries if method in r]
        ax.errorbar(
            rhos,
            [v.mean() for v in vals],
            yerr=[v.std() for v in vals],
            marker="o",
            ms=3,
            capsize=2,
            color=plotting.PALETTE[i],
            label=LABELS[method],
        )
    ax.set_xlabel("bias ratio rho (training; probability)")
    ax.set_ylabel("unbiased test accuracy (fraction)")
    ax.legend(frameon=False)
    plotting.save(fig, path)


def weights(metrics: dict, arrays: dict, path: str) -> None:
    rkey, seed = metrics["main"], metrics["seeds"][0]
    w = arrays[f"{rkey}/ccdb/{seed}/weights"]
    y, bias = arrays[f"{rkey}/train/y"], arrays[f"{rkey}/train/bias"]
    mass = np.zeros((10, 10))
    np.add.at(mass, (y, bias), w)
    fig, axes = plotting.subplots(1, 2, width=3.0, height=2.8, layout="constrained")
    for ax, grid, title in zip(
        axes[0],
        (np.bincount(y * 10 + bias, minlength=100).reshape(10, 10), mass),
        ("training samples", "CCDB weight mass"),
    ):
        im = ax.imshow(grid / grid.sum(), cmap="viridis")
        ax.set_xlabel("colour (index)")
        ax.set_ylabel("digit (class)")
        ax.set_title(title)
        ax.grid(False)
        fig.colorbar(im, ax=ax, shrink=0.7, label="share of the total")
    plotting.save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    accuracy(metrics, job.output.accuracy)
    ratios(metrics, job.output.ratios)
    weights(metrics, read_npz(job.input.predictions), job.output.weights)
