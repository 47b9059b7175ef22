"""Stage: rate-distortion/perception against JPEG (F1), quality against sampler steps (F2), reconstructions
(F3), decoding speed against the paper's table (F4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from matplotlib.ticker import NullFormatter

from repro.papers.cod_lite.test_images import load_test
from repro.reporting.plotting import save, subplots
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json

PAPER_BPP = (0.0039, 0.0078, 0.0156, 0.0312, 0.125, 0.5)  # the paper's six operating points (bits / ds^2)
LABELS = {"mse": "MSE decoder", "onestep": "one-step student (DMD)"}
METRICS = (
    ("psnr", "PSNR (dB, higher better)"),
    ("ms_ssim", "MS-SSIM (higher better)"),
    ("swd", "patch SWD (lower better)"),
)


def label(name: str, short: bool = False) -> str:
    if name.startswith("gen_teacher_"):
        return f"{'gen.' if short else 'generation'}-oriented teacher, {name.rsplit('_', 1)[1]} steps"
    if name.startswith("teacher_"):
        return f"{'compr.' if short else 'compression'}-oriented teacher, {name.rsplit('_', 1)[1]} steps"
    return LABELS.get(name, name)


def mean_item(metrics: dict, decoder: str, metric: str) -> float:
    return float(np.mean(metrics["items"][decoder][metric]))


def rate_distortion(metrics: dict, path: str) -> None:
    n = metrics["sampler_steps"]
    shown = ["mse", "onestep", f"teacher_{n}", f"gen_teacher_{n}"]
    curves = list(metrics["jpeg"].values())
    fig, axes = subplots(1, 3, width=3.4)
    for ax, (metric, ylabel) in zip(axes[0], METRICS):
        for f, style in zip(sorted({r["downscale"] for r in curves[0]}), ("k.-", "k.--", "k.:")):
            rows = [[r for r in c if r["downscale"] == f] for c in curves]
            rate = np.mean([[r["bpp_scan"] for r in c] for c in rows], axis=0)
            value = np.mean([[r[metric] for r in c] for c in rows], axis=0)
            ax.plot(rate, value, style, ms=3, label="JPEG" + (f", 1/{f} size" if f > 1 else " (Pillow, scan bits)"))
        for name in shown:
            ax.plot(metrics["bpp"], mean_item(metrics, name, metric), "o", label=label(name))
        for i, bpp in enumerate(PAPER_BPP):
            ax.axvline(bpp, color="grey", lw=0.6, ls=":", label="paper's operating points" if i == 0 else None)
        ax.set(xscale="log", xlabel="bits per pixel", ylabel=ylabel)
        ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0][0].legend(fontsize=5.5)
    fig.suptitle("mean over test images and seeds; codec rate = index bits written (fixed length)", fontsize=8)
    save(fig, path)


def steps_figure(metrics: dict, path: str) -> None:
    names = [d for d in metrics["decoders"] if d.startswith("teacher_")]
    steps = [int(d.rsplit("_", 1)[1]) for d in names]
    fig, axes = subplots(1, 2, width=3.6)
    for ax, (metric, ylabel) in zip(axes[0], (METRICS[0], METRICS[2])):
        ax.plot(
            steps, [mean_item(metrics, d, metric) for d in names], "o-", label="compression-oriented teacher (Euler)"
        )
        ax.axhline(mean_item(metrics, "onestep", metric), color="C1", label="one-step student (DMD)")
        ax.axhline(mean_item(metrics, "mse", metric), color="C2", ls="--", label="MSE decoder")
        ax.set(xscale="log", xlabel="sampler steps (teacher)", ylabel=ylabel)
        ax.set_xticks(steps, [str(k) for k in steps])
        ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0][0].legend(fontsize=7)
    save(fig, path)


def examples(tests: dict, recon: dict, metrics: dict, path: str) -> None:
    n = metrics["sampler_steps"]
    cols = ["original", "mse", "onestep", f"teacher_{n}", f"gen_teacher_{n}"]
    names = list(tests)[:3]
    fig, axes = subplots(len(names), len(cols), width=1.7, height=1.5)
    for r, name in enumerate(names):
        for c, col in enumerate(cols):
            ax = axes[r][c]
            ax.imshow(tests[name] if col == "original" else recon[f"{name}/{col}"])
            ax.set_xticks([]), ax.set_yticks([])
            ax.grid(False)
            if r == 0:
                ax.set_title("original" if col == "original" else label(col, short=True), fontsize=5.5)
    fig.suptitle(f"{metrics['bpp']:.3f} bpp ({metrics['bits']}-bit indices, {metrics['ds']}x downsampling)", fontsize=8)
    save(fig, path)


def speed(metrics: dict, reported: dict, path: str) -> None:
    n = metrics["sampler_steps"]
    keys = [
        ("decode_mse", "MSE decoder"),
        ("decode_onestep", "one-step student"),
        (f"decode_teacher_{n}", f"teacher, {n} steps"),
    ]
    h, w = metrics["timing_size"]
    fig, axes = subplots(1, 1, width=4.6)
    ax = axes[0][0]
    for i, (key, name) in enumerate(keys):
        times = 1e3 * np.asarray(metrics["timing_s"][key])
        ax.bar(i, np.median(times), color=f"C{i}", alpha=0.75, label=name)
        ax.plot(np.full(len(times), i), times, "k.", ms=3)
    paper = reported["decode_latency_a100_1920x1024"]["value"]
    ax.axhline(paper, color="k", ls="--", label=f"paper: {paper} ms decode, 1920x1024, A100")
    ax.set_xticks(range(len(keys)), [k[1] for k in keys], fontsize=7)
    ax.set(yscale="log", ylabel=f"decode ms per {w}x{h} image (this machine)")
    ax.legend(fontsize=6)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    reported = yaml.safe_load(Path(job.input.reported).read_text())["reported"]
    rate_distortion(metrics, job.output.rate_distortion)
    steps_figure(metrics, job.output.steps)
    examples(load_test(job.input.test), load_arrays(job.input.recon), metrics, job.output.examples)
    speed(metrics, reported, job.output.speed)
