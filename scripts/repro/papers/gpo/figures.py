"""Stage: particle overlay on a test field (F1), rel-L2 by model, task and grid (F2), forward time vs N (F3)."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Ellipse

from repro.reporting.plotting import PALETTE, save, subplots
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json

LABELS = {
    "gpo": "GPO-lite",
    "fno": "FNO-lite",
    "galerkin": "Galerkin transformer",
    "unet": "U-Net",
    "softmax": "softmax attention over points",
    "trivial": "trivial (Darcy: training mean field; NS: persistence)",
}


def particles_figure(preds: dict, training: dict, path: str) -> None:
    tasks = ("darcy", "ns")
    fig, axes = subplots(1, 2, width=3.4, height=3.2)
    for ax, task in zip(axes[0], tasks):
        field = preds[f"{task}/truth/lo"][0, 0]
        ax.imshow(field, origin="lower", extent=(0, 1, 0, 1), cmap="RdBu_r")
        layer = training["particles"][task][0]
        for (cx, cy), (sx, sy) in zip(np.asarray(layer["centres"]), np.asarray(layer["scales"])):
            ax.add_patch(Ellipse((cx, cy), 2 * sx, 2 * sy, fill=False, lw=0.8, color="k"))
        ax.plot(*np.asarray(layer["centres"]).T, "k.", ms=3)
        ax.set(
            title=f"{task}: trial Gaussians (1 sigma), layer 1",
            xlim=(0, 1),
            ylim=(0, 1),
            xlabel="x (domain units)",
            ylabel="y (domain units)",
        )
        ax.grid(False)
    save(fig, path)


def errors_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 2, width=3.6)
    for ax, (task, per_model) in zip(axes[0], metrics["mean_relative_l2"].items()):
        models = list(per_model)
        grids = metrics["grids"][task]
        for i, res in enumerate(("lo", "hi", "irregular")):
            values = [per_model[m].get(res, np.nan) for m in models]
            label = f"{grids[res]}x{grids[res]}" if res in grids else "50% points"
            ax.bar(np.arange(len(models)) + 0.27 * (i - 1), values, 0.27, label=label, color=PALETTE[i])
        ax.set_xticks(np.arange(len(models)), [LABELS.get(m, m).split(" (")[0] for m in models], rotation=15)
        ax.set(title=task, ylabel="mean relative L2 (test, dimensionless)")
    axes[0][0].legend()
    save(fig, path)


def scaling_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.0)
    ax = axes[0][0]
    for name, v in metrics["forward_times"].items():
        slope = metrics["forward_time_slope"][name]
        best = np.min(np.asarray(v["seconds"], float), axis=1)
        ax.loglog(v["points"], best, "o-", label=f"{LABELS.get(name, name)} (slope {slope:.2f})")
    gpo = metrics["forward_times"]["gpo"]
    points = np.asarray(gpo["points"], float)
    ref = np.min(np.asarray(gpo["seconds"], float), axis=1)[0] * points / points[0]
    ax.loglog(points, ref, "k--", lw=0.8, label="linear in N (slope 1)")
    ax.set(xlabel="number of points N", ylabel="forward time (s, batch 1, fastest repeat)", title="Forward time vs N")
    ax.legend(fontsize=6)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    particles_figure(load_arrays(job.input.predictions), read_json(job.input.training), job.output.particles)
    errors_figure(metrics, job.output.errors)
    scaling_figure(metrics, job.output.scaling)
