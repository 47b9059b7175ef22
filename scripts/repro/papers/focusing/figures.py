"""Stage: quality, memory and time per mode (T1), one view's active cells per mode (F1), held-out
reconstructions (F2). The paper was not located, so no reported value is drawn (its registry of reported
numbers is empty)."""

from __future__ import annotations

import numpy as np

from repro.papers.focusing.modes import MODES, draw_step
from repro.reporting.plotting import save, subplots
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json

LABELS = {
    "focusing": "Focusing (carved)",
    "frustum": "frustum-only",
    "sectional": "sectional (matched budget)",
    "random": "random (matched budget)",
    "untrained": "untrained",
}
SHOWN = 1500  # points drawn per panel (a fixed random subset)


def summary(metrics: dict, path: str) -> None:
    memory = metrics["memory_measure"]
    panels = [
        ("chamfer", "L1 Chamfer, held-out (unit cube; lower better)", 1.0),
        ("fscore", f"F-score at tau = {metrics['fscore_tau']} (higher better)", 1.0),
        (memory, "MB per step (" + ("CUDA peak" if memory == "cuda_peak_bytes" else "saved for backward") + ")", 1e-6),
        ("seconds", "ms per training step", 1e3),
        ("active_cells", "active latent cells per step", 1.0),
    ]
    fig, axes = subplots(1, len(panels), width=2.7)
    for ax, (key, label, scale) in zip(axes[0], panels):
        for i, mode in enumerate(MODES):
            if key in ("chamfer", "fscore"):
                values = np.asarray(metrics["items"][mode][key], dtype=float)
            else:
                values = np.asarray(metrics["benchmark"][mode][key], dtype=float)
            ax.bar(i, np.mean(values) * scale, color=f"C{i}", alpha=0.75, label=LABELS[mode])
            ax.plot(np.full(len(values), i), values * scale, "k.", ms=2, alpha=0.5)
        if key in ("chamfer", "fscore"):
            ax.axhline(np.mean(metrics["items"]["untrained"][key]), color="grey", ls="--", label=LABELS["untrained"])
        ax.set_xticks(range(len(MODES)), [m for m in MODES], rotation=30, fontsize=7)
        ax.set_ylabel(label, fontsize=7)
        ax.set_xlabel("training mode", fontsize=7)
    axes[0][0].legend(fontsize=6, loc="upper left")
    fig.suptitle("bars: mean; dots: (seed, shape) items or benchmark steps", fontsize=8)
    save(fig, path)


def active_cells(shapes_dir: str, index: dict, path: str) -> None:
    """The active cells of one training step (first training shape, first view) under each mode, in 3-D."""
    name = next(n for n, s in zip(index["names"], index["split"]) if s == "train")
    shape = load_arrays(f"{shapes_dir}/{name}.npz")
    cams = np.asarray(index["cams"])
    fig = subplots(1, len(MODES), width=2.6, height=2.8)[0]
    for ax in fig.axes:
        ax.remove()
    for i, mode in enumerate(MODES):
        rng = np.random.default_rng(0)
        active = draw_step(shape, cams, mode, rng, 1)[3]
        ax = fig.add_subplot(1, len(MODES), i + 1, projection="3d")
        x, y, z = np.nonzero(active)
        ax.scatter(
            x + 0.5, y + 0.5, z + 0.5, marker="s", s=12, color=f"C{i}", alpha=0.6, edgecolors="k", linewidths=0.2
        )
        n = active.shape[0]
        ax.set(xlim=(0, n), ylim=(0, n), zlim=(0, n))
        ax.set_title(f"{LABELS[mode]}: {int(active.sum())} cells", fontsize=7)
        ax.set_xlabel("x cell", fontsize=6)
        ax.set_ylabel("y cell", fontsize=6)
        ax.set_zlabel("z cell", fontsize=6)
        ax.tick_params(labelsize=5)
    fig.suptitle(f"active latent cells (squares at cell centres) of one training step ({name}, view 0)", fontsize=8)
    save(fig, path)


def reconstructions(shapes_dir: str, index: dict, runs: dict, seed: int, path: str) -> None:
    tests = [n for n, s in zip(index["names"], index["split"]) if s == "test"][:3]
    columns = ["ground truth", *MODES, "untrained"]
    fig, axes = subplots(len(tests), len(columns), width=1.7, height=1.7, sharex=True, sharey=True)
    for r, name in enumerate(tests):
        truth = load_arrays(f"{shapes_dir}/{name}.npz")["points"]
        clouds = [truth] + [runs[f"{m}/s{seed}/{name}"] for m in (*MODES, "untrained")]
        for c, (title, pts) in enumerate(zip(columns, clouds)):
            ax = axes[r][c]
            if len(pts):
                pts = pts[np.random.default_rng(0).permutation(len(pts))[:SHOWN]]
                ax.scatter(pts[:, 0], pts[:, 2], s=0.3, c=pts[:, 1], cmap="viridis", vmin=-1, vmax=1)
            ax.set(xlim=(-1, 1), ylim=(-1, 1), aspect="equal", xticks=[-1, 0, 1], yticks=[-1, 0, 1])
            ax.tick_params(labelsize=5)
            if r == len(tests) - 1:
                ax.set_xlabel("x (unit cube)", fontsize=6)
            if c == 0:
                ax.set_ylabel("z (unit cube)", fontsize=6)
            ax.set_title(f"{name}: {LABELS.get(title, title)}" if c == 0 else LABELS.get(title, title), fontsize=6)
    fig.suptitle(f"held-out surface points (seed {seed}; {SHOWN} per panel), side view, colour = y", fontsize=8)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    index = read_json(f"{job.input.shapes}/index.json")
    summary(metrics, job.output.summary)
    active_cells(job.input.shapes, index, job.output.active_cells)
    seed = int(next(iter(metrics["untrained"]["seeds"]))[1:])
    reconstructions(job.input.shapes, index, load_arrays(job.input.runs), seed, job.output.reconstructions)
