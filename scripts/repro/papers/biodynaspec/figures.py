"""Rule entry ``biodynaspec_figures``: R_s curves, PCA projections, PC power spectra, metrics table."""

from __future__ import annotations

import numpy as np
from scipy import signal

from repro.reporting.plotting import PALETTE, save, subplots
from repro.workflow.io import read_json

TABLE_KEYS = [
    ("r_s_report", "R_s (Å)"),
    ("rmwd", "RMWD (Å)"),
    ("md_pca_w2", "MD PCA W2"),
    ("joint_pca_w2", "Joint PCA W2"),
    ("pca_psd_logcorr", "PSD-LogCorr*"),
    ("cfre", "CFRE*"),
]


def _pca(md_all: np.ndarray, k: int):
    flat = md_all.reshape(len(md_all), -1).astype(np.float64)
    mean = flat.mean(0)
    _, _, vt = np.linalg.svd(flat - mean, full_matrices=False)
    return mean, vt[:k]


def _project(x, mean, comps):
    return (x.reshape(len(x), -1) - mean) @ comps.T / np.sqrt(x.shape[-2])


def rs_figure(metrics: dict, path) -> None:
    fig, axes = subplots(width=4.2, height=3.0)
    ax = axes[0, 0]
    for colour, (model, summ) in zip(PALETTE, metrics["summary"].items()):
        curve = summ["r_s_curve"]
        if curve:
            ax.plot(np.arange(1, len(curve) + 1), curve, color=colour, label=metrics["labels"][model])
    ax.set(xlabel="s (frames)", ylabel="R_s (Å)", title="R_s on held-out trajectories")
    ax.legend()
    save(fig, path)


def _ensemble_items(samples, limit=3):
    """Items with an MD ensemble, longest true trajectory first."""
    keys = [k.split("/", 1)[1] for k in samples.files if k.startswith("md/")]
    keys = [k for k in keys if len(samples[f"md/{k}"]) >= 8]
    return sorted(keys, key=lambda k: -len(samples[f"true/{k}"]))[:limit]


def pca_figure(samples, metrics: dict, path) -> None:
    items = _ensemble_items(samples)
    models = [m for m in metrics["summary"] if m != "static"]
    fig, axes = subplots(1, max(len(items), 1), width=3.4, height=3.0)
    for ax, key in zip(axes[0], items):
        md_all = samples[f"md/{key}"]
        mean, comps = _pca(md_all, 2)
        p = _project(md_all, mean, comps)
        ax.scatter(p[:, 0], p[:, 1], s=6, color="0.5", label="MD")
        for colour, model in zip(PALETTE, models):
            g = samples[f"{model}/{key}"][:, 1:]
            q = _project(g.reshape(-1, *g.shape[2:]), mean, comps)
            ax.scatter(q[:, 0], q[:, 1], s=4, color=colour, alpha=0.6, label=metrics["labels"][model])
        ax.set(title=key, xlabel="MD PC1 (Å)", ylabel="MD PC2 (Å)")
    axes[0, 0].legend(fontsize=6)
    save(fig, path)


def psd_figure(samples, metrics: dict, path, n_pcs: int = 2) -> None:
    items = _ensemble_items(samples, limit=1)
    fig, axes = subplots(1, n_pcs, width=3.4, height=3.0)
    if items:
        key = items[0]
        mean, comps = _pca(samples[f"md/{key}"], n_pcs)
        true = samples[f"true/{key}"]
        n = (
            min(len(true), samples[f"biodynaspec/{key}"].shape[1])
            if f"biodynaspec/{key}" in samples.files
            else len(true)
        )
        f, md_psd = signal.periodogram(_project(true[:n], mean, comps), axis=0)
        for pc, ax in enumerate(axes[0]):
            ax.loglog(f[1:], md_psd[1:, pc], color="k", label="MD")
            for colour, model in zip(PALETTE, [m for m in metrics["summary"] if m != "static"]):
                psds = [signal.periodogram(_project(t[:n], mean, comps), axis=0)[1] for t in samples[f"{model}/{key}"]]
                ax.loglog(f[1:], np.mean(psds, 0)[1:, pc], color=colour, label=metrics["labels"][model])
            ax.set(title=f"{key}: PC{pc + 1}", xlabel="frequency (1/frame)", ylabel="PSD (Å²·frame)")
        axes[0, 0].legend(fontsize=6)
    save(fig, path)


def table_figure(metrics: dict, path) -> None:
    fig, axes = subplots(width=9.0, height=0.5 + 0.3 * (len(metrics["summary"]) + 2))
    ax = axes[0, 0]
    ax.axis("off")
    rows = []
    for model, summ in metrics["summary"].items():
        rows.append([model] + ["–" if summ.get(k) is None else f"{summ[k]:.3f}" for k, _ in TABLE_KEYS])
    paper = metrics["paper"]
    rows.append(
        ["paper (full scale)"]
        + [f"{paper[k]:.3f}" for k in ("r_250", "rmwd", "md_pca_w2", "joint_pca_w2", "pca_psd_logcorr", "cfre")]
    )
    table = ax.table(
        cellText=rows,
        colLabels=["model"] + [label for _, label in TABLE_KEYS],
        loc="center",
        colWidths=[0.22] + [0.13] * len(TABLE_KEYS),
    )
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    ax.set_title(f"BioDynaSpec reproduction ({metrics['scale']} scale); * = our metric definition")
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    samples = np.load(job.input.samples)
    rs_figure(metrics, job.output.rs_curve)
    pca_figure(samples, metrics, job.output.pca)
    psd_figure(samples, metrics, job.output.psd)
    table_figure(metrics, job.output.table)
