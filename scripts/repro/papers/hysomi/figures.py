"""The brief's figures: trajectories, parameter recovery, error against training size, equifinality."""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.papers.hysomi.observations import read_observations
from repro.papers.hysomi.runs import load_runs
from repro.papers.hysomi.soil_model import PARAMS, STATES
from repro.reporting import plotting
from repro.workflow.io import read_json

COLORS = {
    "truth": "black",
    "constrained": plotting.PALETTE[0],
    "unconstrained": plotting.PALETTE[1],
    "global": plotting.PALETTE[2],
    "blackbox": plotting.PALETTE[3],
    "per_sample": plotting.PALETTE[4],
    "two_step": plotting.PALETTE[5],
}


UNITS = {"V_d": "1/d", "K_d": "mg C/g", "V_u": "1/d", "K_u": "mg C/g", "CUE": "-", "r_d": "1/d", "r_ep": "1/d",
         "r_el": "1/d"}  # fmt: skip


def trajectories(runs, level, main_n, observations, path) -> None:
    """F1: every pool of three test samples; noisy observations where a state is observed."""
    run = runs[(level, "constrained")]
    ids = [str(i) for i in run["test_ids"][:3]]
    obs = read_observations(observations, ids)
    times = run["times"]
    fig, axes = plotting.subplots(3, len(STATES), width=2.3, height=1.9, layout="constrained")
    for r, sample in enumerate(ids):
        for c, state in enumerate(STATES):
            ax = axes[r, c]
            ax.plot(times, obs["truth"][r, :, c], color=COLORS["truth"], label="truth")
            for method in ("constrained", "unconstrained", "global"):
                m = runs[(level, method)]
                members = np.flatnonzero(m["n_train"] == main_n)
                ax.plot(times, m["traj"][members, r, :, c].mean(0), color=COLORS[method], label=method, lw=1.2)
            if bool(obs["observed"][r, :, c].any()):
                ax.plot(times, obs["value"][r, :, c], "o", ms=2.5, color="grey", label="observed")
            if r == 0:
                ax.set_title(state + ("" if bool(obs["observed"][..., c].any()) else " (not observed)"))
            if c == 0:
                ax.set_ylabel(f"{sample}\nmg C / g soil")
            if r == 2:
                ax.set_xlabel("time (days)")
    handles, labels = axes[0, 1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    plotting.save(fig, path)


def parameter_recovery(runs, level, main_n, params_true, path) -> None:
    """F2: predicted against true parameter per parameter, constrained vs unconstrained (seed mean)."""
    truth = pd.read_parquet(params_true).set_index("sample_id")
    fig, axes = plotting.subplots(2, 4, width=2.4, height=2.3, layout="constrained")
    for method in ("constrained", "unconstrained"):
        run = runs[(level, method)]
        members = np.flatnonzero(run["n_train"] == main_n)
        pred = run["theta"][members].mean(0)
        true = truth.loc[[str(i) for i in run["test_ids"]], list(PARAMS)].to_numpy()
        for i, p in enumerate(PARAMS):
            ax = axes[i // 4, i % 4]
            ax.scatter(true[:, i], pred[:, i], s=10, color=COLORS[method], label=method, alpha=0.8)
            lo, hi = true[:, i].min(), true[:, i].max()
            ax.plot([lo, hi], [lo, hi], color="black", lw=0.8)
            ax.set(title=f"{p} ({UNITS[p]})", xlabel="true", ylabel="predicted (mean over seeds)")
    axes[0, 0].legend()
    plotting.save(fig, path)


def error_vs_ntrain(metrics, level, path) -> None:
    """F3: normalised test error against training-set size, observed and non-observed states."""
    fig, axes = plotting.subplots(1, 2, layout="constrained")
    methods = metrics["levels"][level]["methods"]
    for j, group in enumerate(("observed", "unobserved")):
        ax = axes[0, j]
        for method, result in methods.items():
            by_n = result["by_n_train"]
            ns = sorted(by_n, key=int)
            if by_n[ns[0]][group] is None:
                continue
            mean = [by_n[n][group]["mean"] for n in ns]
            sd = [by_n[n][group]["sd"] for n in ns]
            ax.errorbar(
                [int(n) for n in ns], mean, yerr=sd, label=method, color=COLORS[method], marker="o", ms=3, capsize=2
            )
        oracle = metrics["levels"][level]["oracle"][group]
        ax.axhline(oracle, color="black", ls=":", label="oracle (true θ)")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("training samples")
        ax.set_ylabel("normalised RMSE (RMSE / sd of the state)")
        ax.set_title(f"{group} states")
    axes[0, 0].legend()
    plotting.save(fig, path)


def equifinality(metrics, level, path) -> None:
    """F4: mean coefficient of variation of each parameter across seeds."""
    methods = metrics["levels"][level]["methods"]
    fig, axes = plotting.subplots(1, 1, width=5.0)
    ax = axes[0, 0]
    x = np.arange(len(PARAMS))
    for k, method in enumerate(("constrained", "unconstrained")):
        cv = [methods[method]["equifinality_cv"][p] for p in PARAMS]
        ax.bar(x + (k - 0.5) * 0.38, cv, width=0.38, color=COLORS[method], label=method)
    ax.set_xticks(x, PARAMS)
    ax.set_ylabel("coefficient of variation across seeds (dimensionless)")
    ax.legend()
    plotting.save(fig, path)


def main(job) -> None:
    settings = job.params.settings
    metrics = read_json(job.input.metrics)
    runs = load_runs(list(job.input.runs))
    level, main_n = settings["complexity"][0], settings["main_n_train"]
    trajectories(runs, level, main_n, job.input.observations, job.output.trajectories)
    parameter_recovery(runs, level, main_n, job.input.params_true, job.output.parameter_recovery)
    error_vs_ntrain(metrics, level, job.output.error_vs_ntrain)
    equifinality(metrics, level, job.output.equifinality)
