"""Stage: next-step VRMSE per task and model (F1), rollout VRMSE against step (F2), first-layer warp
directions against the advecting velocity (F3), SelfWarp forward time against grid points (F4)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import PALETTE, save, subplots
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json

LABELS = {"flower": "Flower-lite", "fno": "FNO-lite", "unet": "U-Net-lite", "persistence": "persistence"}


def reported_value(metrics: dict, task: str, kind: str) -> float | None:
    key = f"vrmse_{'next_step' if kind == 'next' else 'rollout_1to20'}_{metrics['datasets'][task]}"
    return metrics.get("reported", {}).get(key)


def vrmse_figure(metrics: dict, path: str) -> None:
    tasks = list(metrics["per_sample"]["next"])
    fig, axes = subplots(1, len(tasks), width=2.9)
    for ax, task in zip(axes[0], tasks):
        runs = {m: v for m, v in metrics["per_sample"]["next"][task].items() if m != "persistence"}
        for i, values in enumerate(runs.values()):
            values = np.asarray(values)
            ax.bar(i, values.mean(), color=PALETTE[i], yerr=values.std() / np.sqrt(len(values)), capsize=2)
        ax.axhline(
            np.mean(metrics["per_sample"]["next"][task]["persistence"]), color="k", ls="--", lw=0.8, label="persistence"
        )
        paper = reported_value(metrics, task, "next")
        if paper is not None:
            ax.plot(0, paper, "r*", ms=8, label="paper (Flower, 17M)")
        ax.set_xticks(range(len(runs)), [LABELS.get(m, m) for m in runs], rotation=15)
        ax.set(
            title=task if metrics["datasets"][task] == task else f"{task}: {metrics['datasets'][task]}",
            ylabel="next-step VRMSE (test, dimensionless)",
        )
        ax.legend(fontsize=6)
    save(fig, path)


def rollout_figure(metrics: dict, path: str) -> None:
    tasks = list(metrics["rollout_curve"])
    fig, axes = subplots(1, len(tasks), width=2.9)
    for ax, task in zip(axes[0], tasks):
        for i, (model, per_seed) in enumerate(metrics["rollout_curve"][task].items()):
            curve = np.mean(list(per_seed.values()), axis=0)
            style = dict(color="k", ls="--") if model == "persistence" else dict(color=PALETTE[i])
            ax.plot(np.arange(1, len(curve) + 1), curve, "o-", ms=3, label=LABELS.get(model, model), **style)
        paper = reported_value(metrics, task, "rollout")
        if paper is not None:
            ax.axhline(paper, color="r", lw=0.8, label="paper 1:20 mean (Flower)")
        ax.set(
            title=task if metrics["datasets"][task] == task else f"{task}: {metrics['datasets'][task]}",
            xlabel="rollout step (frames)",
            ylabel="VRMSE (dimensionless)",
        )
        ax.legend(fontsize=6)
    save(fig, path)


def warp_figure(scores: dict, metrics: dict, path: str) -> None:
    keys = sorted(k for k in scores if k.endswith("/displacement"))
    fig, axes = subplots(1, 2, width=3.3, height=3.2)
    if not keys:
        for ax in axes[0]:
            ax.text(0.5, 0.5, "no advecting velocity in this task's data", ha="center", transform=ax.transAxes)
        save(fig, path)
        return
    run = keys[0].split("/")[2]
    cos = metrics["displacement_cosines"][run]
    head = int(np.argmax(cos))
    disp, vel = scores[keys[0]][0, head], scores["advection/velocity_cells"][0]
    n_y, n_x = disp.shape[-2:]
    step = max(1, n_x // 16)
    yy, xx = np.mgrid[0:n_y:step, 0:n_x:step]
    for ax, (u, v), title in (
        (axes[0][0], (-vel[0], -vel[1]), "-velocity x dt / dx (cells per frame)"),
        (axes[0][1], (disp[0], disp[1]), f"head {head} displacement (cells), cosine {cos[head]:.2f}"),
    ):
        ax.quiver(xx, yy, u[::step, ::step], v[::step, ::step], angles="xy")
        ax.set(title=title, aspect="equal", xlabel="x (cells)", ylabel="y (cells)")
        ax.title.set_fontsize(7)
    save(fig, path)


def scaling_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.0)
    ax = axes[0][0]
    t = metrics["forward_times"]
    points = np.asarray(t["points"], float)
    runs = np.asarray(t["seconds"], float)
    best = np.min(runs, axis=1)
    ax.loglog(np.repeat(points, runs.shape[1]), runs.ravel(), ".", color=PALETTE[0], alpha=0.3, ms=3, label="repeats")
    ax.loglog(
        points,
        best,
        "o-",
        color=PALETTE[0],
        label=f"SelfWarp, fastest repeat (slope {metrics['forward_time']['slope']:.2f})",
    )
    ax.loglog(points, best[-1] * points / points[-1], "k--", label="linear (slope 1)")
    ax.set(xlabel="grid points", ylabel="forward time (s)", title="SelfWarp cost (batch 1, CPU)")
    ax.legend(fontsize=7)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    vrmse_figure(metrics, job.output.vrmse)
    rollout_figure(metrics, job.output.rollout)
    warp_figure(load_arrays(job.input.scores), metrics, job.output.warps)
    scaling_figure(metrics, job.output.scaling)
