"""Stage: learned coupling curves (F1), metrics per coupling over seeds (F2), the GP-EI search trace (F3)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

FIXED = {"synchronous": 1.0, "alpha_0.5": 0.5, "alpha_2": 2.0}


def curves_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.6, height=3.4)
    ax = axes[0][0]
    s = np.linspace(0, 1, 201)
    for name, alpha in FIXED.items():
        ax.plot(s, s**alpha, "--", lw=1, label=f"{name} (alpha = {alpha:g})")
    for seed, alpha in zip(metrics["seeds"], metrics["learned_alpha"]):
        ax.plot(s, s**alpha, lw=2, label=f"learned, seed {seed} (alpha = {alpha:.2f})")
    ax.set(xlabel="t_struct", ylabel="t_seq", title="coupling curves (below diagonal: structure leads)")
    ax.legend(fontsize=6)
    save(fig, path)


def metrics_figure(metrics: dict, path: str) -> None:
    keys = ("consistency", "validity", "unique_pairs", "novelty")
    fig, axes = subplots(1, len(keys), width=2.6)
    couplings = metrics["couplings"]
    for ax, key in zip(axes[0], keys):
        values = [np.asarray(metrics["per_coupling"][c][key], dtype=float) for c in couplings]
        means = [np.mean(v) for v in values]
        spread = [np.std(v, ddof=1) if v.size > 1 else 0.0 for v in values]
        ax.bar(range(len(couplings)), means, yerr=spread, capsize=3)
        ax.set_xticks(range(len(couplings)), couplings, rotation=45, ha="right", fontsize=7)
        ax.set(title=key)
    save(fig, path)


def search_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.8)
    ax = axes[0][0]
    search = metrics["search"]
    for seed, x, y, r in zip(metrics["seeds"], search["log_alpha"], search["score"], search["round"]):
        order = np.argsort(x)
        ax.plot(np.exp(np.asarray(x)[order]), np.asarray(y)[order], "-", lw=0.8, alpha=0.6)
        ax.scatter(np.exp(x), y, c=r, cmap="viridis", s=18, label=f"seed {seed}")
    ax.set(xscale="log", xlabel="alpha", ylabel="validation consistency", title="GP-EI search (colour: round)")
    ax.legend(fontsize=7)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    curves_figure(metrics, job.output.curves)
    metrics_figure(metrics, job.output.comparison)
    search_figure(metrics, job.output.search)
