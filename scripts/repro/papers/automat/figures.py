"""Stage: accuracy and lattice error against dose for both controllers; qualitative panels at the lowest dose
(input counts, denoised image, closed-loop reconstruction re-rendered)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.papers.automat.analysis import denoise
from repro.papers.automat.forward import render_template
from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {"feed_forward": "feed-forward", "closed_loop": "closed loop (verify + retry)"}


def dose_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 2, width=3.4)
    doses = metrics["doses"]
    for method, label in LABELS.items():
        rows = [metrics["by_method_dose"][method][str(d)] for d in doses]
        axes[0][0].semilogx(doses, [r["accuracy"] for r in rows], "o-", label=label)
        axes[0][1].semilogx(doses, [100 * r["lattice_error"] for r in rows], "o-", label=label)
    axes[0][0].set(xlabel="dose (e/Å^2)", ylabel="structure-matching accuracy", ylim=(0, 1.05))
    axes[0][1].set(xlabel="dose (e/Å^2)", ylabel="mean lattice-parameter error (%)")
    axes[0][0].legend()
    save(fig, path)


def panels_figure(images: dict, rec: pd.DataFrame, settings: dict, path: str, count: int = 4) -> None:
    imaging = settings["imaging"] | settings["denoise"]
    lowest = float(np.min(images["doses"]))
    loop = rec[(rec["method"] == "closed_loop") & (rec["dose"] == lowest)].sort_values("image")
    picks = np.linspace(0, len(loop) - 1, count).astype(int)
    fig, axes = subplots(count, 3, width=2.0, height=2.0)
    for row, k in zip(axes, picks):
        r = loop.iloc[k]
        counts = images["noisy"][r["image"], 0]
        den, _ = denoise(counts, imaging, tuple(settings["controller"]["a_range"]))
        shown = render_template(r["template"], r["a"], r["theta"], np.zeros(2), imaging)
        truth = str(images["names"][images["template"][r["image"]]])
        for ax, img, title in zip(
            row, (counts, den, shown), (f"input ({truth})", "denoised", f"loop: {r['template']}")
        ):
            ax.imshow(img, cmap="gray")
            ax.set(title=title, xticks=[], yticks=[])
            ax.grid(False)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    dose_figure(metrics, job.output.accuracy_vs_dose)
    with np.load(job.input.images) as z:
        images = {k: z[k] for k in ("noisy", "doses", "names", "template")}
    panels_figure(images, pd.read_parquet(job.input.reconstructions), job.params.settings, job.output.panels)
