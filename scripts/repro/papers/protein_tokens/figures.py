"""Stage: RMSD against kept tokens (F1), equal-bits reconstruction and probe comparison (F2), decoded windows (F3)."""

from __future__ import annotations

import numpy as np

from repro.metrics.protein_geometry import superpose
from repro.papers.protein_tokens.arrays import open_arrays
from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {"apt": "APT (global, nested dropout)", "apt_no_nested": "global, no nested dropout", "local": "local"}


def rmsd_vs_tokens(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.2, height=3.0)
    ax = axes[0][0]
    for variant, curve in metrics["rmsd_by_k"].items():
        k = np.arange(1, len(curve) + 1)
        if len(curve) == 1:
            k = np.array([len(metrics["rmsd_by_k"]["apt"])])
            ax.plot(k, curve, "s", markersize=8, label=LABELS[variant])
        else:
            ax.plot(k, curve, "o-", markersize=3, label=LABELS[variant])
    ax.axhline(metrics["pca_baseline"]["mean_rmsd"], color="grey", ls="--", label="PCA of distances (equal bits)")
    medoid = float(np.mean(metrics["medoid_rmsd_per_group"]))
    ax.axhline(medoid, color="k", ls=":", label="medoid training window (no tokens)")
    ax.set(xlabel="kept tokens k", ylabel="held-out C-alpha RMSD (Å)", title="Reconstruction from a token prefix")
    ax.legend(fontsize=7)
    save(fig, path)


def comparisons(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 2, width=3.6, height=3.0)
    names = list(metrics["mean_rmsd_at_k"]) + ["pca"]
    values = list(metrics["mean_rmsd_at_k"].values()) + [metrics["pca_baseline"]["mean_rmsd"]]
    axes[0][0].bar(range(len(names)), values)
    axes[0][0].set_xticks(range(len(names)), names, rotation=20, fontsize=7)
    axes[0][0].set(ylabel="held-out C-alpha RMSD (Å)", title=f"{metrics['bits_per_window']:.0f} bits per window")
    probe = metrics["probe"]
    probes = list(probe["accuracy"])
    x = np.arange(len(probes))
    axes[0][1].bar(x - 0.2, [probe["accuracy"][p] for p in probes], 0.4, label="accuracy")
    axes[0][1].bar(x + 0.2, [probe["macro_f1"][p] for p in probes], 0.4, label="macro F1")
    axes[0][1].set_xticks(x, probes, rotation=20, fontsize=7)
    axes[0][1].set(ylim=(0, 1), ylabel="cross-fitted score (fraction)", title="fold-class proxy probe (grouped folds)")
    axes[0][1].legend(fontsize=7)
    save(fig, path)


def decoded(windows: dict, outputs: dict, path: str, count: int = 3) -> None:
    """C-alpha traces (x-y projection after superposition) of held-out windows: truth, decode from k = 1, K/4
    and K tokens, and the zero-shot shrunk decode, from the first training seed."""
    held = np.flatnonzero(np.asarray(windows["split"]) > 0)
    seed = next(k for k in outputs if k.startswith("ca/apt/")).rsplit("/", 1)[1]  # the first training seed
    ca = outputs[f"ca/apt/{seed}"]
    tokens = len(ca)
    picks = np.linspace(0, len(held) - 1, count).astype(int)
    fig, axes = subplots(1, count, width=3.0, height=3.0)
    for ax, i in zip(axes[0], picks):
        m = windows["mask"][held[i]] > 0
        true = windows["backbone"][held[i]][m, 1]
        ax.plot(*true[:, :2].T, "k-", lw=2, label="true")
        for k in sorted({1, max(1, tokens // 4), tokens}):
            ax.plot(*superpose(ca[k - 1, i][m], true)[:, :2].T, lw=1, label=f"k = {k}")
        s = outputs["shrunk_mask"][i] > 0
        small = outputs[f"shrunk/apt/{seed}"][i][s, 1]
        ax.plot(*(small - small.mean(0) + true.mean(0))[:, :2].T, ":", lw=1, label="shrunk 0.75 L")
        ax.set(title=f"held-out window {i}", xlabel="x (Å, after superposition)", ylabel="y (Å)")
    axes[0][0].legend(fontsize=6)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    windows, outputs = open_arrays(job.input.windows), open_arrays(job.input.outputs)
    rmsd_vs_tokens(metrics, job.output.rmsd_vs_tokens)
    comparisons(metrics, job.output.comparisons)
    decoded(windows, outputs, job.output.decoded)
