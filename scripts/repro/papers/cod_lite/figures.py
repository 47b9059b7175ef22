"""Stage: rate-distortion/perception against JPEG (F1), quality against sampler steps (F2), examples (F3)."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullFormatter

from repro.reporting.plotting import save, subplots
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json

LABELS = {"mse": "MSE autoencoder", "onestep": "one-step (distilled)"}


def label(name: str) -> str:
    if name.startswith("gen_teacher_"):
        return f"generation-oriented teacher, {name.rsplit('_', 1)[1]} steps"
    if name.startswith("teacher_"):
        return f"teacher, {name.rsplit('_', 1)[1]} steps"
    return LABELS[name]


def mean_over_seeds(metrics: dict, decoder: str, metric: str) -> float:
    return float(np.mean([s["decoders"][decoder][metric] for s in metrics["seeds"].values()]))


def rate_distortion(metrics: dict, path: str) -> None:
    n = metrics["sampler_steps"]
    shown = ["mse", "onestep", f"teacher_{n}", f"gen_teacher_{n}"]
    fig, axes = subplots(1, 3, width=3.2)
    for ax, metric, title in zip(
        axes[0], ("psnr", "ms_ssim", "swd"), ("PSNR (dB)", "MS-SSIM", "patch SWD (lower better)")
    ):
        jpeg = metrics["jpeg"]
        ax.plot([r["bpp_scan"] for r in jpeg], [r[metric] for r in jpeg], "k.-", label="JPEG (scan bits)")
        ax.plot([r["bpp_file"] for r in jpeg], [r[metric] for r in jpeg], "k.:", alpha=0.5, label="JPEG (file bits)")
        for name in shown:
            ax.plot(metrics["bpp"], mean_over_seeds(metrics, name, metric), "o", label=label(name))
        ax.set(xscale="log", xlabel="bits per pixel", title=title)
        ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0][0].legend(fontsize=6)
    save(fig, path)


def steps_figure(metrics: dict, path: str) -> None:
    names = [d for d in metrics["decoders"] if d.startswith("teacher_")]
    steps = [int(d.rsplit("_", 1)[1]) for d in names]
    fig, axes = subplots(1, 2, width=3.4)
    for ax, metric, title in zip(axes[0], ("psnr", "swd"), ("PSNR (dB)", "patch SWD (lower better)")):
        ax.plot(steps, [mean_over_seeds(metrics, d, metric) for d in names], "o-", label="teacher (Euler)")
        ax.axhline(mean_over_seeds(metrics, "onestep", metric), color="C1", label="one-step distilled")
        ax.axhline(mean_over_seeds(metrics, "mse", metric), color="C2", ls="--", label="MSE autoencoder")
        ax.set(xscale="log", xlabel="sampler steps", title=title)
    axes[0][0].legend()
    save(fig, path)


def examples(images: dict, recon: dict, metrics: dict, path: str) -> None:
    n = metrics["sampler_steps"]
    cols = ["original", "mse", "onestep", f"teacher_{n}", f"gen_teacher_{n}"]
    test = images["test"]
    rows = min(3, len(test))
    fig, axes = subplots(rows, len(cols), width=1.6, height=1.7)
    for r in range(rows):
        for c, name in enumerate(cols):
            ax = axes[r][c]
            ax.imshow(test[r] if name == "original" else recon[f"s0/{name}"][r])
            ax.set_xticks([]), ax.set_yticks([])
            ax.grid(False)
            if r == 0:
                ax.set_title("original" if name == "original" else label(name), fontsize=6)
    fig.suptitle(f"seed 0, {metrics['bpp']:.3f} bpp (bits written)", fontsize=8)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    rate_distortion(metrics, job.output.rate_distortion)
    steps_figure(metrics, job.output.steps)
    examples(load_arrays(job.input.images), load_arrays(job.input.recon), metrics, job.output.examples)
