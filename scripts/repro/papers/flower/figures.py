"""Stage: next-step VRMSE per task and model (F1), rollout VRMSE against step (F2), first-layer warp
directions against the true velocity on advection (F3), SelfWarp forward time against grid points (F4)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import PALETTE, save, subplots
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json

LABELS = {"flower": "Flower-lite", "fno": "FNO-lite", "unet": "U-Net-lite"}


def vrmse_figure(metrics: dict, path: str) -> None:
    tasks = list(metrics["vrmse_next_step"])
    fig, axes = subplots(1, len(tasks), width=2.8)
    for ax, task in zip(axes[0], tasks):
        runs = metrics["vrmse_next_step"][task]
        for i, per_seed in enumerate(runs.values()):
            values = list(per_seed.values())
            ax.bar(i, np.mean(values), color=PALETTE[i], yerr=np.std(values) if len(values) > 1 else None)
            ax.plot([i] * len(values), values, "k.", ms=3)
        ax.set_xticks(range(len(runs)), [LABELS.get(m, m) for m in runs], rotation=15)
        ax.set(title=task, ylabel="next-step VRMSE (test)")
    save(fig, path)


def rollout_figure(metrics: dict, path: str) -> None:
    tasks = list(metrics["rollout_curve"])
    fig, axes = subplots(1, len(tasks), width=2.8)
    for ax, task in zip(axes[0], tasks):
        for i, (model, per_seed) in enumerate(metrics["rollout_curve"][task].items()):
            curve = np.mean(list(per_seed.values()), axis=0)
            ax.plot(np.arange(1, len(curve) + 1), curve, "o-", ms=3, color=PALETTE[i], label=LABELS.get(model, model))
        ax.set(title=task, xlabel="rollout step", ylabel="VRMSE")
    axes[0][0].legend()
    save(fig, path)


def warp_figure(preds: dict, metrics: dict, path: str) -> None:
    key = sorted(k for k in preds if k.endswith("/displacement"))[0]
    seed = key.split("/")[2]
    cos = metrics["displacement_cosines"][seed]
    head = int(np.argmax(cos))
    disp, vel = preds[key][0, head], preds["advection/velocity"][0] * float(preds["advection/frame_dt_cells"])
    n = disp.shape[-1]
    yy, xx = np.mgrid[0:n:2, 0:n:2]
    fig, axes = subplots(1, 2, width=3.3, height=3.2)
    for ax, (u, v), title in (
        (axes[0][0], (-vel[0], -vel[1]), "-velocity * dt (cells)"),
        (axes[0][1], (disp[0], disp[1]), f"head {head} displacement, cosine {cos[head]:.2f}"),
    ):
        ax.quiver(xx, yy, u[::2, ::2], v[::2, ::2], angles="xy")
        ax.set(title=title, aspect="equal")
    save(fig, path)


def scaling_figure(metrics: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.0)
    t = metrics["forward_times"]
    axes[0][0].loglog(t["points"], t["seconds"], "o-", label=f"SelfWarp (slope {metrics['forward_time_slope']:.2f})")
    ref = np.asarray(t["points"], float)
    axes[0][0].loglog(ref, t["seconds"][-1] * ref / ref[-1], "k--", label="linear")
    axes[0][0].set(xlabel="grid points", ylabel="forward time (s)", title="SelfWarp cost")
    axes[0][0].legend()
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    vrmse_figure(metrics, job.output.vrmse)
    rollout_figure(metrics, job.output.rollout)
    warp_figure(load_arrays(job.input.predictions), metrics, job.output.warps)
    scaling_figure(metrics, job.output.scaling)
