"""Rule entry ``cgmt_erm_figures``: (F1) laws of theta_hat^T x vs predictions, (F2) test error vs n/p,
(F3) pseudo-Huber regulariser vs its quadratic surrogate."""

from __future__ import annotations

import numpy as np

from repro.reporting import plotting
from repro.workflow.io import read_json

PREDICTIONS = {
    "convolution": "mu^T x * N(0, tr(C Sigma))",
    "gaussian": "Gaussian equivalent",
    "gaussian_mixture": "Gaussian-mixture equivalent",
    "fixed_point": "fixed point",
}


def _density(grid: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    return np.gradient(cdf, grid)


def histograms(curves, metrics: dict, s: dict, path: str) -> None:
    designs = sorted({r["design"] for r in metrics["records"]})
    losses = s["losses"]
    fig, axes = plotting.subplots(len(losses), len(designs), width=3.0, height=2.4, layout="constrained")
    p = metrics["p_main"]
    for i, loss in enumerate(losses):
        for j, design in enumerate(designs):
            ax, key = axes[i, j], f"{design}/p{p}/{loss}/l2"
            edges, hist, grid = curves[f"{key}/edges"], curves[f"{key}/hist"], curves[f"{key}/grid"]
            ax.stairs(hist, edges, fill=True, color="0.8", label="empirical")
            for name, label in PREDICTIONS.items():
                if f"{key}/cdf_{name}" in curves:
                    ax.plot(grid, _density(grid, curves[f"{key}/cdf_{name}"]), label=label, lw=1.2)
            ax.set_xlim(edges[0], edges[-1])
            ax.set_title(f"{design}, {loss}")
            if i == len(losses) - 1:
                ax.set_xlabel(r"$\hat\theta^\top x$")
            if j == 0:
                ax.set_ylabel("density")
    legend_ax = axes[0, designs.index("mixture")] if "mixture" in designs else axes[0, 0]
    legend_ax.legend(loc="upper left", fontsize=6)
    plotting.save(fig, path)


def test_error_curves(metrics: dict, s: dict, path: str) -> None:
    designs = sorted({r["design"] for r in metrics["records"]})
    fig, axes = plotting.subplots(1, len(designs), width=3.0, height=2.6)
    for ax, design in zip(axes[0], designs):
        for k, loss in enumerate(s["losses"]):
            recs = sorted(
                (
                    r
                    for r in metrics["records"]
                    if r["design"] == design and r["loss"] == loss and r["reg"] == "l2" and r["p"] == metrics["p_main"]
                ),
                key=lambda r: r["ratio"],
            )
            ratios = [r["ratio"] for r in recs]
            color = plotting.PALETTE[k]
            ax.errorbar(
                ratios,
                [r["test_error"] for r in recs],
                yerr=[r["test_error_sd"] for r in recs],
                fmt="o",
                color=color,
                ms=3,
                label=f"{loss} (empirical)",
            )
            pred = "test_error_fixed_point" if design == "mixture" else "test_error_convolution"
            ax.plot(ratios, [r[pred] for r in recs], "-", color=color, lw=1, label=f"{loss} (predicted)")
        ax.set_xscale("log")
        ax.set_xticks(s["ratios"], [f"{r:g}" for r in s["ratios"]])
        ax.minorticks_off()
        ax.set_title(design)
        ax.set_xlabel("n / p")
    axes[0, 0].set_ylabel("test error (fraction misclassified)")
    axes[0, 0].legend(fontsize=6)
    plotting.save(fig, path)


def regulariser(metrics: dict, s: dict, path: str) -> None:
    designs = s["huber"]["designs"]
    fig, axes = plotting.subplots(1, 2, width=3.2, height=2.6)
    regs = [("pseudo_huber", s["huber"]["loss"]), ("surrogate", s["huber"]["loss"]), ("l2", s["huber"]["loss"])]
    width = 0.25
    for k, (reg, loss) in enumerate(regs):
        recs = [
            next(
                r
                for r in metrics["records"]
                if r["design"] == d
                and r["reg"] == reg
                and r["loss"] == loss
                and r["p"] == metrics["p_main"]
                and r["ratio"] == metrics["main_ratio"]
            )
            for d in designs
        ]
        x = np.arange(len(designs)) + (k - 1) * width
        axes[0, 0].bar(x, [r["test_error"] for r in recs], width, yerr=[r["test_error_sd"] for r in recs], label=reg)
        axes[0, 1].bar(x, [r["theta_norm"] for r in recs], width, label=reg)
    for ax, label in zip(axes[0], ("test error", r"mean $\|\hat\theta\|$")):
        ax.set_xticks(np.arange(len(designs)), designs)
        ax.set_ylabel(label)
    axes[0, 0].legend(fontsize=6)
    plotting.save(fig, path)


def main(job) -> None:
    s = job.params.settings
    metrics = read_json(job.input.metrics)
    with np.load(job.input.curves) as curves:
        histograms(curves, metrics, s, job.output.projection_laws)
    test_error_curves(metrics, s, job.output.test_error)
    regulariser(metrics, s, job.output.regulariser)
