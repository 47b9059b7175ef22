"""Stage: Fig. 2-style interaction curves phi_S(t) per scenario and target, recovery by fitted models with the
local-accuracy errors, and real-data curves with bootstrap bands."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

TERM_LABELS = {"1": "x1", "2": "x2", "4": "x3", "3": "x1 x x2", "5": "x1 x x3", "6": "x2 x x3"}
TARGET_LABELS = {"log_hazard": "log-hazard", "hazard": "hazard", "survival": "survival"}


def interaction_figure(metrics: dict, path: str) -> None:
    scenarios = [k for k in metrics["curves"] if k.startswith("scenario/")]
    fig, axes = subplots(3, len(scenarios), width=2.8, height=2.7, layout="constrained")
    for col, key in enumerate(scenarios):
        entry = metrics["curves"][key]
        for row, target in enumerate(("log_hazard", "hazard", "survival")):
            ax = axes[row][col]
            for mask, label in TERM_LABELS.items():
                ax.plot(entry["grid"], entry[target][mask], label=label, ls="-" if len(label) <= 2 else "--")
            ax.set(title=f"{key.split('/', 1)[1]}: {TARGET_LABELS[target]}")
    for row, target in enumerate(("log_hazard", "hazard", "survival")):
        axes[row][0].set_ylabel(f"phi_S(t), {TARGET_LABELS[target]}")
    for ax in axes[-1]:
        ax.set_xlabel("t (simulation time units)")
    axes[0][0].legend(fontsize=6)
    save(fig, path)


def recovery_figure(metrics: dict, path: str) -> None:
    curves = metrics["curves"]
    models = [m for m in ("gbsa", "coxph", "rsf") if m in curves]
    fig, axes = subplots(1, len(curves["truth"]) + 1, width=2.6, height=2.3)
    for i, truth in enumerate(curves["truth"]):
        ax = axes[0][i]
        ax.plot(curves["grid"], truth, color="k", label="ground truth")
        for name in models:
            ax.plot(curves["grid"], curves[name][i], label=name)
        ax.set(title=f"point {i}: phi_12(t), survival", xlabel="t (simulation time units)")
        if i == 0:
            ax.set_ylabel("phi_12(t) (survival probability)")
    axes[0][0].legend()
    ax = axes[0][-1]
    errors = metrics["local_accuracy"]["ground_truth"] | {
        "fitted (max)": np.max(list(metrics["local_accuracy"]["fitted"].values()))
    }
    ax.bar(range(len(errors)), [max(v, 1e-18) for v in errors.values()])
    ax.set_yscale("log")
    ax.set_xticks(range(len(errors)), list(errors), rotation=30, fontsize=7)
    ax.set(title="local-accuracy error (max)", ylabel="max |sum phi - (f - nu(empty))|")
    save(fig, path)


def real_figure(metrics: dict, path: str) -> None:
    datasets = list(metrics["real"])
    fig, axes = subplots(1, len(datasets), width=4.0, height=3.0)
    for ax, name in zip(axes[0], datasets):
        entry = metrics["real"][name]
        for model, terms in entry["models"].items():
            for label, band in terms.items():
                line = ax.plot(
                    entry["grid"], band["mean"], label=f"{label} ({model})", ls="-" if " x " not in label else "--"
                )
                ax.fill_between(entry["grid"], band["low"], band["high"], color=line[0].get_color(), alpha=0.15)
        ax.set(
            title=f"{name}: mean |phi_S(t)| on survival",
            xlabel="time (the cohort's units: days)",
            ylabel="mean |phi_S(t)| (survival probability)",
        )
        ax.legend(fontsize=5, ncol=2)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    interaction_figure(metrics, job.output.interaction_curves)
    recovery_figure(metrics, job.output.fitted_recovery)
    real_figure(metrics, job.output.real_curves)
