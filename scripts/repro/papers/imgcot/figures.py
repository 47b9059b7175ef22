"""Stage: accuracy against reasoning tokens per method (T1) and examples of rendered chains of thought."""

from __future__ import annotations

import numpy as np
import pandas as pd
import zarr

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json


def accuracy_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 2, width=3.4)
    for ax, split in zip(axes[0], ("test", "heldout")):
        for method, tokens in metrics["tokens"].items():
            acc = metrics["accuracy"][method].get(split, np.nan)
            ax.scatter(tokens, acc, label=method)
            ax.annotate(method, (tokens, acc), fontsize=6)
        ax.set(xlabel="reasoning tokens per problem", ylabel="accuracy", title=f"{split} problems")
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
