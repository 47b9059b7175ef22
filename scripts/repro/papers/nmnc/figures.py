"""Rule entry ``nmnc_figures``: (F1) captured Jacobian energy against k, activity PCs vs random subspaces;
(F2) gradient cosine against perturbation budget per method; (F3) validation accuracy against forward passes;
(F4) participation ratio against width (log-log)."""

from __future__ import annotations

import numpy as np

from repro.reporting import plotting
from repro.workflow.io import read_json

METHOD_COLOURS = {
    "bp": plotting.PALETTE[7],
    "vnc": plotting.PALETTE[1],
    "nmnc": plotting.PALETTE[0],
    "random": plotting.PALETTE[2],
    "readout": plotting.PALETTE[3],
}
LABELS = {"random": "random subspace", "readout": "readout only (hidden frozen)"}


def label(method: str) -> str:
    return LABELS.get(method, method.upper())


def errorbars(ax, x, values: np.ndarray, method: str) -> None:
    """Mean and sd over seeds (rows of ``values``) of one method."""
    ax.errorbar(
        x,
        values.mean(0),
        yerr=values.std(0),
        marker="o",
        ms=3,
        capsize=2,
        color=METHOD_COLOURS[method],
        label=label(method),
    )


def alignment(runs: dict, path: str) -> None:
    layers = runs["runs"][0]["alignment"]["layers"]
    fig, axes = plotting.subplots(1, len(layers), width=3.0, height=2.6, layout="constrained")
    for li, ax in enumerate(axes[0]):
        ks = [int(k) for k in layers[li]["rho"]]
        rho = np.array([[r["alignment"]["layers"][li]["rho"][str(k)] for k in ks] for r in runs["runs"]])
        rand = np.array([[r["alignment"]["layers"][li]["rho_random"][str(k)] for k in ks] for r in runs["runs"]])
        ax.semilogx(ks, rho.mean(0), "o-", color=METHOD_COLOURS["nmnc"], ms=3, label="activity PCs")
        ax.semilogx(ks, rand.mean(0), "s--", color=METHOD_COLOURS["random"], ms=3, label="random subspace")
        ax.semilogx(ks, np.array(ks) / layers[li]["n"], "k:", lw=1, label="k / n")
        ax.set_xlabel("subspace dimension k")
        ax.set_ylabel("captured Jacobian energy (fraction)")
        ax.set_title(f"hidden layer {li + 1} (n = {layers[li]['n']})")
    axes[0][0].legend(frameon=False)
    plotting.save(fig, path)


def cosines(runs: dict, budgets: list[int], path: str) -> None:
    n_layers = len(runs["runs"][0]["alignment"]["layers"])
    fig, axes = plotting.subplots(1, n_layers, width=3.0, height=2.6, layout="constrained")
    for li, ax in enumerate(axes[0]):
        for method in ("vnc", "nmnc", "random"):
            values = np.array(
                [[r["cosines"][f"{li}/{method}/{b}"]["activation"] for b in budgets] for r in runs["runs"]]
            )
            errorbars(ax, budgets, values, method)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("forward passes per sample (count)")
        ax.set_ylabel("cosine with true gradient (median)")
        ax.set_title(f"hidden layer {li + 1}")
    axes[0][0].legend(frameon=False)
    plotting.save(fig, path)


def learning(runs: dict, path: str) -> None:
    fig, axes = plotting.subplots(1, 1, width=3.6, height=2.7, layout="constrained")
    ax = axes[0][0]
    for method in runs["runs"][0]["learning"]:
        curves = np.array([r["learning"][method]["val_accuracy"] for r in runs["runs"]])
        passes = np.array(runs["runs"][0]["learning"][method]["forward_passes"])
        errorbars(ax, passes, curves, method)
    ax.set_xscale("log")
    ax.set_xlabel("forward passes (count, all samples)")
    ax.set_ylabel("validation accuracy (fraction)")
    ax.legend(frameon=False)
    plotting.save(fig, path)


def dimension(metrics: dict, path: str) -> None:
    fig, axes = plotting.subplots(1, 1, width=3.2, height=2.7, layout="constrained")
    ax = axes[0][0]
    widths = np.array(metrics["settings"]["widths"], float)
    pr = np.array([r["pr_by_width"] for r in metrics["per_seed"]])
    ax.loglog(widths, pr.mean(0), "o-", color=METHOD_COLOURS["nmnc"], ms=3, label="participation ratio")
    ax.loglog(widths, pr.mean(0)[0] * widths / widths[0], "k:", lw=1, label="linear in width")
    ax.loglog(widths, pr.mean(0)[0] * np.sqrt(widths / widths[0]), "k--", lw=0.8, label="slope 1/2")
    ax.minorticks_off()
    ax.set_xticks(widths, [str(int(w)) for w in widths])
    ticks = np.unique(np.round(np.geomspace(pr.min(), pr.mean(0)[0] * widths[-1] / widths[0], 5), 1))
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlabel("hidden width (units)")
    ax.set_ylabel("participation ratio (dimensions)")
    ax.set_title("last hidden layer; widths up to the input dimension", fontsize=8)
    ax.legend(frameon=False)
    plotting.save(fig, path)


def main(job) -> None:
    runs, metrics = read_json(job.input.runs), read_json(job.input.metrics)
    alignment(runs, job.output.alignment)
    cosines(runs, metrics["settings"]["budgets"], job.output.cosines)
    learning(runs, job.output.learning)
    dimension(metrics, job.output.dimension)
