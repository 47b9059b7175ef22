"""Stage: task success of each configuration, overall and per category (T1), and cost per task (T2)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

SHOWN = {
    "agent": "SP-Mind (docs, verify-and-revise)",
    "agent_no_verify": "no verification (first call)",
    "react": "plain ReAct loop",
    "agent_no_docs": "no skill docs",
    "random": "random calls (trivial)",
}


def _overall(per_task: dict[str, float], seed: int = 0) -> tuple[float, float, float]:
    """Mean success with a 95% bootstrap interval over tasks."""
    x = np.array(list(per_task.values()), dtype=float)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), (2000, len(x)))].mean(1)
    return float(x.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def success_figure(metrics: dict, path: str) -> None:
    keys = [k for k in SHOWN if k in metrics["per_task"]]
    cats = metrics["categories"]
    fig, axes = subplots(1, 2, width=11.0, height=4.2, gridspec_kw={"width_ratios": [1, 2.2]})
    ax = axes[0][0]
    stats = [_overall(metrics["per_task"][k]) for k in keys]
    mean = np.array([s[0] for s in stats])
    err = np.array([[s[0] - s[1] for s in stats], [s[2] - s[0] for s in stats]])
    ax.barh(np.arange(len(keys)), mean, xerr=err, color=["C0", "C1", "C2", "C3", "0.6"][: len(keys)], capsize=3)
    ax.set_yticks(np.arange(len(keys)), [SHOWN[k] for k in keys], fontsize=7)
    ax.invert_yaxis()
    ax.set(xlabel="task success (share of tasks, 95% bootstrap)", xlim=(0, 1.05))
    ax.set_title(f"SmolLM2-135M agent, {metrics['tasks']} tasks", fontsize=8)
    ax = axes[0][1]
    grid = np.array([[metrics["per_category"][k].get(c, np.nan) for c in cats] for k in keys])
    image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(np.arange(len(cats)), cats, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(np.arange(len(keys)), [SHOWN[k] for k in keys], fontsize=7)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if np.isfinite(grid[i, j]):
                ax.text(
                    j,
                    i,
                    f"{grid[i, j]:.2g}",
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="w" if grid[i, j] < 0.6 else "k",
                )
    ax.set_title("success per category (18 categories of SP-Bench-mini)", fontsize=8)
    fig.colorbar(image, ax=ax, label="task success (share)")
    save(fig, path)


def cost_figure(metrics: dict, path: str) -> None:
    keys = [k for k in SHOWN if k in metrics["cost"] and k != "random"]
    fig, axes = subplots(1, 2, width=8.0, height=2.8)
    for ax, field, label in (
        (axes[0][0], "calls", "tool calls per task"),
        (axes[0][1], "tokens", "tokens the model reads per task (dialogue, excluding the shared system prompt)"),
    ):
        ax.barh(np.arange(len(keys)), [metrics["cost"][k][field] for k in keys], color="C0")
        ax.set_yticks(np.arange(len(keys)), [SHOWN[k] for k in keys], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(label, fontsize=7)
    axes[0][0].set_title("Cost per task (T2)", fontsize=8)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    success_figure(metrics, job.output.success)
    cost_figure(metrics, job.output.cost)
