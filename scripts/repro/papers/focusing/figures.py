"""Stage: per-mode quality, memory and time (T1), active cells per shape (F1), held-out reconstructions (F2)."""

from __future__ import annotations

import numpy as np

from repro.papers.focusing.carving import MODES
from repro.reporting.plotting import save, subplots
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json

LABELS = {"dense": "no carving", "carved": "carving", "focusing": "carving + zoom"}


def per_seed(metrics: dict, mode: str, key: str) -> np.ndarray:
    return np.array([s[key] for s in metrics["modes"][mode]["seeds"].values()], dtype=float)


def summary(metrics: dict, path: str) -> None:
    panels = [
        ("chamfer", "L1 Chamfer (lower better)", 1.0),
        ("fscore", f"F-score at tau={metrics['fscore_tau']}", 1.0),
        ("saved_bytes_per_step", "saved-for-backward MB / step", 1e-6),
        ("seconds_per_step", "ms / training step (CPU)", 1e3),
    ]
    fig, axes = subplots(1, len(panels), width=2.6)
    for ax, (key, title, scale) in zip(axes[0], panels):
        for i, mode in enumerate(MODES):
            values = per_seed(metrics, mode, key) * scale
            ax.bar(i, np.mean(values), color=f"C{i}", alpha=0.7)
            ax.plot(np.full(len(values), i), values, "k.", ms=4)
        ax.set_xticks(range(len(MODES)), [LABELS[m] for m in MODES], rotation=20, fontsize=7)
        ax.set_title(title, fontsize=8)
    save(fig, path)


def active_cells(metrics: dict, path: str) -> None:
    names = list(metrics["shapes"])
    fig, axes = subplots(1, 1, width=6.0)
    ax = axes[0][0]
    x = np.arange(len(names))
    for i, mode in enumerate(MODES):
        ax.bar(x + (i - 1) * 0.27, [metrics["shapes"][n][mode]["active"] for n in names], 0.27, label=LABELS[mode])
    low, high = metrics["target_active"]
    ax.axhspan(low, high, color="grey", alpha=0.15, label="zoom target range")
    ax.set_xticks(x, [f"{n}\n{metrics['zoom_cells'][n]}^3" for n in names], fontsize=6)
    ax.set(ylabel="active latent cells", yscale="log")
    ax.legend(fontsize=7)
    save(fig, path)


def reconstructions(shapes: dict, runs: dict, metrics: dict, path: str) -> None:
    tests = [str(n) for n, s in zip(shapes["names"], shapes["split"]) if s == "test"]
    fig, axes = subplots(len(tests), 1 + len(MODES), width=1.8, height=1.8)
    for r, name in enumerate(tests):
        clouds = [("ground truth", shapes[f"{name}/points"])] + [(LABELS[m], runs[f"{m}/s0/{name}"]) for m in MODES]
        for c, (title, pts) in enumerate(clouds):
            ax = axes[r][c]
            if len(pts):
                ax.scatter(pts[:, 0], pts[:, 2], s=0.2, c=pts[:, 1], cmap="viridis")
            ax.set(xlim=(-1, 1), ylim=(-1, 1), xticks=[], yticks=[], aspect="equal")
            ax.set_title(f"{name}: {title}" if c == 0 else title, fontsize=6)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    summary(metrics, job.output.summary)
    active_cells(metrics, job.output.active_cells)
    reconstructions(load_arrays(job.input.shapes), load_arrays(job.input.runs), metrics, job.output.reconstructions)
