"""Stage: accuracy against reasoning tokens per method (T1) and examples of rendered chains of thought."""

from __future__ import annotations

import numpy as np
import pandas as pd
import zarr

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json


def accuracy_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 3, width=3.8)
    splits = (
        ("test_short", "one-step test problems"),
        ("test_long", "multi-step test problems"),
        ("heldout", "held-out templates"),
    )
    prior = metrics.get("prior_correct", {})
    for ax, (split, title) in zip(axes[0], splits):
        for k, (method, tokens) in enumerate(metrics["tokens"].items()):
            x = np.asarray(metrics["correct"][method].get(split, []), dtype=float)
            if not x.size:
                continue
            half = 1.96 * np.sqrt(max(np.mean(x) * (1 - np.mean(x)), 1e-12) / x.size)
            ax.errorbar(tokens, np.mean(x), yerr=half, fmt="o", ms=4, color=f"C{k % 8}", label=method, capsize=2)
        if split in prior or split == "test_long":
            base = np.mean(prior.get(split, prior.get("test", [np.nan])))
            ax.axhline(base, color="0.5", ls=":", lw=0.9, label="class prior")
        ax.set(
            xlabel="reasoning tokens per problem (mean)",
            ylabel="answer accuracy (fraction, 95% CI)",
            ylim=(0, 1.05),
            title=title,
        )
    axes[0][0].legend(fontsize=6)
    save(fig, path)


def rendered_figure(problems: pd.DataFrame, images: np.ndarray, path: str, count: int = 4) -> None:
    picks = [
        int(problems.index[problems["cot_steps"].map(len) == n][0])
        for n in sorted(problems["cot_steps"].map(len).unique())
    ]
    picks = picks[:count]
    fig, axes = subplots(len(picks), 1, width=5.0, height=1.4)
    for ax, i in zip(axes[:, 0], picks):
        ax.imshow(images[i], cmap="gray", vmin=0, vmax=255)
        ax.set(
            title=f"{len(problems['cot_steps'][i])} steps, font size {problems['font_size'][i]}", xticks=[], yticks=[]
        )
    save(fig, path)


def main(job) -> None:
    accuracy_figure(read_json(job.input.metrics), job.output.accuracy_tokens)
    problems = pd.read_parquet(job.input.problems)
    images = np.asarray(zarr.open_group(job.input.images, mode="r")["images"])
    rendered_figure(problems, images, job.output.rendered)
