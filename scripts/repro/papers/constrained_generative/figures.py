"""Stage: samples per perturbation (F1), distances and violations per model x perturbation (T1 as a figure),
held-out loss traces (F3)."""

from __future__ import annotations

import numpy as np

from repro.papers.constrained_generative.manifolds import manifold
from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json, read_npz


def _angles(name: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, str, str]:
    """Two plotting coordinates of manifold points: longitude/latitude, (phi, psi), or the chart (u, v)."""
    if name == "sphere":
        lon, lat = np.degrees(np.arctan2(x[:, 1], x[:, 0])), np.degrees(np.arcsin(np.clip(x[:, 2], -1, 1)))
        return lon, lat, "longitude (deg)", "latitude (deg)"
    if name == "torus":
        return (
            np.degrees(np.arctan2(x[:, 1], x[:, 0])),
            np.degrees(np.arctan2(x[:, 3], x[:, 2])),
            "phi (deg)",
            "psi (deg)",
        )
    return x[:, 0], x[:, 1], "chart u", "chart v"


def samples_figure(metrics: dict, runs: dict, data: dict, path: str) -> None:
    tasks = list(metrics["tasks"])
    perts = [k.split("__")[1] for k in metrics["tasks"][tasks[0]] if k.startswith("ddpm__")]
    rows = [(t, k) for t in tasks for k in ("ddpm", "flow")]
    fig, axes = subplots(len(rows), len(perts) + 1, width=2.6, height=2.4, layout="constrained")
    for r, (task, kind) in enumerate(rows):
        geom = manifold(task)
        a, b, xl, yl = _angles(task, data[task]["x_test"])
        axes[r][0].scatter(a, b, s=1, c="k")
        axes[r][0].set(title=f"{task}: held-out data", xlabel=xl, ylabel=yl)
        for c, pert in enumerate(perts, start=1):
            x = runs[f"{task}__{kind}__{pert}__samples"][0].astype(np.float64)
            if np.all(np.isfinite(x)):
                a, b, _, _ = _angles(task, geom.project(x, 5))
                axes[r][c].scatter(a, b, s=1)
            sw2 = metrics["tasks"][task][f"{kind}__{pert}"]["sw2"][0]
            axes[r][c].set(title=f"{kind}, {pert}: SW2 {sw2:.3f}", xlabel=xl, ylabel=yl)
    save(fig, path)


DISTANCES = {
    "mmd2": "MMD^2 to held-out (after projection)",
    "sw2": "sliced W2 to held-out (after projection)",
    "violation_before": "mean |h(x)| before projection",
    "normal_gain": "DDPM noise-predictor gain across M at t -> 0",
}


def distances_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(len(metrics["tasks"]), len(DISTANCES), width=3.0, height=2.8, layout="constrained")
    for r, (task, runs) in enumerate(metrics["tasks"].items()):
        for c, (key, label) in enumerate(DISTANCES.items()):
            names = [k for k in runs if "__" in k and key in runs[k]]
            values = [np.asarray(runs[n][key], dtype=float) for n in names]
            axes[r][c].bar(range(len(names)), [np.nanmean(v) for v in values], yerr=[np.nanstd(v) for v in values])
            axes[r][c].set_xticks(range(len(names)), [n.replace("__", " ") for n in names], rotation=60, fontsize=6)
            scale = "log" if key in ("mmd2", "violation_before") and all(np.nanmin(v) > 0 for v in values) else "linear"
            axes[r][c].set(title=f"{task}: {label}", yscale=scale, ylabel="mean ± sd over seeds")
    save(fig, path)


def losses_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(len(metrics["tasks"]), 2, width=3.4)
    for r, (task, runs) in enumerate(metrics["tasks"].items()):
        for c, kind in enumerate(("ddpm", "flow")):
            for name, run in runs.items():
                if name.startswith(f"{kind}__"):
                    for s, trace in enumerate(run["history"]):
                        axes[r][c].plot(
                            trace,
                            color=f"C{list(runs).index(name) % 10}",
                            lw=0.8,
                            label=name.split("__")[1] if s == 0 else None,
                        )
            unit = "noise-prediction MSE" if kind == "ddpm" else "NLL (nats per point)"
            axes[r][c].set(title=f"{task}: {kind} held-out loss", xlabel="epoch", ylabel=unit)
            axes[r][c].legend(fontsize=6)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    runs = read_npz(job.input.runs)
    data = {name: read_npz(getattr(job.input, name)) for name in metrics["tasks"]}
    samples_figure(metrics, runs, data, job.output.samples)
    distances_figure(metrics, job.output.distances)
    losses_figure(metrics, job.output.losses)
