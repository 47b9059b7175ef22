"""Stage: subspace stability with the Davis-Kahan bound (F1), retrieval per method (T1 as a figure),
and the gate's false-alarm/miss trade-off."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {
    "ssca": "SSCA",
    "no_gaussianization": "SSCA - Gaussianization",
    "infonce": "InfoNCE",
    "cca": "CCA (raw)",
    "cca_hard_rank": "CCA (hard-rank Gauss.)",
}


def stability_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.0)
    ax = axes[0][0]
    for i, rows in enumerate(m["davis_kahan"].values()):
        observed = [r["sin_theta"] for r in rows]
        bound = [np.minimum(r["bound"], 10.0) for r in rows]
        x = np.full(len(rows), i) + np.linspace(-0.15, 0.15, len(rows))
        ax.scatter(x, observed, s=12, label="observed sin Theta" if i == 0 else None, color="C0")
        ax.scatter(
            x, bound, s=12, marker="_", label="Davis-Kahan bound (clipped at 10)" if i == 0 else None, color="C3"
        )
    ax.set_xticks(range(len(m["davis_kahan"])), [LABELS.get(k, k) for k in m["davis_kahan"]], rotation=15)
    ax.set(yscale="log", ylabel="||sin Theta||")
    ax.legend()
    save(fig, path)


def retrieval_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.4)
    ax = axes[0][0]
    for i, name in enumerate(m["recall_at_1"]):
        values = [m["retrieval_mean"][name][f"R@{k} a->b"] for k in (1, 5, 10)]
        ax.bar(np.arange(3) + 0.16 * (i - 2), values, width=0.16, label=LABELS[name])
    ax.set_xticks(range(3), ["R@1", "R@5", "R@10"])
    ax.set(ylabel="recall (Fourier -> Karhunen-Loeve, mean over seeds)")
    ax.legend(fontsize=6)
    save(fig, path)


def gate_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.6)
    ax = axes[0][0]
    for drift, per_alpha in m["gate"].items():
        fa = [c["false_alarms"] / c["n"] for c in per_alpha.values()]
        miss = [c["misses"] / c["n"] for c in per_alpha.values()]
        ax.plot(fa, miss, "o-", ms=3, label=f"drift {drift} sd")
    ax.set(xlabel="false-alarm rate (clean batches)", ylabel="miss rate (drifted batches)")
    ax.legend()
    save(fig, path)


def main(job) -> None:
    m = read_json(job.input.metrics)
    stability_figure(m, job.output.stability)
    retrieval_figure(m, job.output.retrieval)
    gate_figure(m, job.output.gate)
