"""Stage: per-category success of each planner configuration (T1) and cost per task (T2)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

SHOWN = ("retrieval", "retrieval_no_verify", "retrieval_no_docs", "rule", "rule_no_verify", "random_no_verify")


def success_figure(metrics: dict, path: str) -> None:
    shown = [k for k in SHOWN if k in metrics["per_category"]] + [
        k for k in metrics["per_category"] if k.startswith(("smollm2", "hosted"))
    ]
    cats = metrics["categories"]
    fig, axes = subplots(width=7.0, height=3.0)
    ax = axes[0][0]
    width = 0.8 / len(shown)
    for j, key in enumerate(shown):
        values = [metrics["per_category"][key].get(c, np.nan) for c in cats]
        ax.bar(np.arange(len(cats)) + j * width, values, width, label=f"{key} ({metrics['success'][key]:.2f})")
    ax.set_xticks(np.arange(len(cats)) + 0.4 - width / 2, cats, rotation=30, ha="right")
    ax.set(ylabel="task success", ylim=(0, 1.05), title="SP-Bench-mini success per category (overall in legend)")
    ax.legend(fontsize=6, ncol=2)
    save(fig, path)


def cost_figure(metrics: dict, path: str) -> None:
    keys = [k for k in metrics["cost"] if k != "reference"]
    fig, axes = subplots(width=4.5, height=2.8)
    ax = axes[0][0]
    calls = [metrics["cost"][k]["calls"] for k in keys]
    ax.barh(keys, calls)
    ax.set(xlabel="tool calls per task", title="Cost per task")
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    success_figure(metrics, job.output.success)
    cost_figure(metrics, job.output.cost)
