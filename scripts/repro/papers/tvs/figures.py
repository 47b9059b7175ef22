"""Stage: TVS against MPJPE per policy (F1), DSJE per tercile and joint group (F2), MID per policy (F3), flawed
segment detection ROC (F4)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

TVS_LABEL = "motion TVS (gear-normalised torque change per rad)"


def correlation_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.6)
    ax = axes[0][0]
    for name, p in m["policies"].items():
        ax.scatter(m["tvs"], p["mpjpe_mm"], label=f"{name} PD (rho = {p['spearman_tvs']:.2f})", s=14)
    ax.set(xlabel=TVS_LABEL, ylabel="tracking MPJPE (mm, log scale)", yscale="log", title="TVS vs imitation error")
    ax.legend()
    save(fig, path)


def dsje_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, len(m["policies"]), width=4.6)
    for ax, (name, p) in zip(axes[0], m["policies"].items(), strict=True):
        groups = ["legs", "spine", "arms"]
        bins = len(p["dsje"]["all"])
        for k, g in enumerate(groups):
            ax.bar(np.arange(bins) + (k - 1) * 0.27, p["dsje"][g], 0.27, label=g)
        ax.set_xticks(np.arange(bins), [f"T{b + 1}" for b in range(bins)])
        ax.set(
            xlabel="TVS tercile (T1 easiest)",
            ylabel="mean body error (mm, log scale)",
            yscale="log",
            title=f"DSJE, {name} PD",
        )
    axes[0][0].legend()
    save(fig, path)


def mid_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.6)
    ax = axes[0][0]
    for name, p in m["policies"].items():
        edges = np.asarray(p["mid"]["edges"])
        ax.step(edges[1:], p["mid"]["success"], where="pre", label=f"{name} PD (MID = {p['mid']['mid']:.2f})")
    ax.axhline(0.8, color="grey", ls="--", label="success threshold 0.8")
    ax.set(
        xlabel="TVS bin upper edge (gear-normalised torque change per rad)",
        ylabel="success rate (fraction of clips)",
        ylim=(-0.05, 1.05),
        title="Maximum Imitable Difficulty",
    )
    ax.legend()
    save(fig, path)


def roc(labels: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-scores)
    y = labels[order]
    tpr = np.concatenate([[0], np.cumsum(y) / max(y.sum(), 1)])
    fpr = np.concatenate([[0], np.cumsum(~y) / max((~y).sum(), 1)])
    return fpr, tpr


def flaws_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.4)
    ax = axes[0][0]
    seg = m["flaw_segments"]
    labels = np.asarray(seg["label"], dtype=bool)
    for key in ("tvs", "acceleration"):
        fpr, tpr = roc(labels, np.asarray(seg[key], dtype=float))
        ax.plot(fpr, tpr, label=f"{key} (AUROC {m['flaw_auroc'][key]:.2f})")
    ax.plot([0, 1], [0, 1], color="grey", ls=":", label="chance")
    ax.set(
        xlabel="false positive rate (fraction of clean segments)",
        ylabel="true positive rate (fraction of flawed segments)",
        title="flawed segment detection",
    )
    ax.legend()
    save(fig, path)


def main(job) -> None:
    m = read_json(job.input.metrics)
    correlation_figure(m, job.output.correlation)
    dsje_figure(m, job.output.dsje)
    mid_figure(m, job.output.mid)
    flaws_figure(m, job.output.flaws)
