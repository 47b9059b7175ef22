"""Stage: subspace stability with the Davis-Kahan bound (F1), retrieval per method and ablation (T1, T3 as a
figure), and the gate's miss rate across the drift sweep with and without the learned Gaussianization."""

from __future__ import annotations

import numpy as np

from repro.papers.ssca.claims import MISS_TARGET
from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {
    "ssca": "SSCA",
    "minus_sw_hub": "SSCA - SW hub",
    "minus_spectral": "SSCA - spectral",
    "no_gaussianization": "SSCA - Gaussianization",
    "infonce": "InfoNCE",
    "cca": "CCA (raw)",
    "cca_hard_rank": "CCA (hard-rank Gauss.)",
    "nutrimouse": "nutrimouse bootstraps",
}


def stability_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.4, height=3.0, layout="constrained")
    ax = axes[0][0]
    for i, rows in enumerate(m["davis_kahan"].values()):
        observed = [r["sin_theta"] for r in rows]
        bound = [np.minimum(r["bound"], 10.0) for r in rows]
        x = np.full(len(rows), i) + np.linspace(-0.15, 0.15, len(rows))
        ax.scatter(x, observed, s=12, label="observed ||sin Theta||" if i == 0 else None, color="C0")
        ax.scatter(
            x, bound, s=14, marker="_", label="Davis-Kahan bound (clipped at 10)" if i == 0 else None, color="C3"
        )
    ax.set_xticks(range(len(m["davis_kahan"])), [LABELS.get(k, k) for k in m["davis_kahan"]], rotation=10)
    ax.set(yscale="log", ylabel="||sin Theta|| of the top-k subspace (dimensionless)",
           title="subspace stability across splits")  # fmt: skip
    ax.legend()
    save(fig, path)


def retrieval_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=6.0, height=3.0, layout="constrained")
    ax = axes[0][0]
    names = list(m["recall_at_1"])
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [m["retrieval_mean"][name][f"R@{k} a->b"] for k in (1, 5, 10)]
        x = np.arange(3) + width * (i - (len(names) - 1) / 2)
        ax.bar(x, values, width=width, label=LABELS[name], color=f"C{i}")
        ax.scatter(np.full(len(m["recall_at_1"][name]), x[0]), m["recall_at_1"][name], s=6, color="k", zorder=3)
    ax.set_xticks(range(3), ["R@1", "R@5", "R@10"])
    ax.set(ylabel="recall, Fourier -> Karhunen-Loeve (share of queries)",
           title="cross-view retrieval, mean over seeds (dots: R@1 per seed, both directions)")  # fmt: skip
    ax.legend(fontsize=6, ncols=2)
    save(fig, path)


def gate_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.2, height=3.0, layout="constrained")
    ax = axes[0][0]
    alpha = str(m["gate_alpha"])
    for key, label, colour in (("gate", "learned Gaussianization", "C0"), ("gate_zscore", "robust z-score", "C1")):
        drifts = sorted(m[key], key=float)
        miss = [m[key][d][alpha]["misses"] / m[key][d][alpha]["n"] for d in drifts]
        fa = m[key][drifts[0]][alpha]["false_alarms"] / m[key][drifts[0]][alpha]["n"]
        ax.plot([float(d) for d in drifts], miss, "o-", ms=3, color=colour, label=f"{label} (false alarms {fa:.3f})")
    ax.axhline(MISS_TARGET, color="k", ls=":", lw=1, label=f"design target: miss <= {MISS_TARGET}")
    ax.set(xscale="log", xlabel="drift of view 1 (training sd)", ylabel=f"miss rate at alpha = {alpha}",
           title="calibrated copula gate")  # fmt: skip
    ax.legend(fontsize=7)
    save(fig, path)


def main(job) -> None:
    m = read_json(job.input.metrics)
    stability_figure(m, job.output.stability)
    retrieval_figure(m, job.output.retrieval)
    gate_figure(m, job.output.gate)
