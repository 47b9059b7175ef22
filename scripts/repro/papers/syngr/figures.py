"""Stage: HR@10/NDCG@10 per variant and benchmark (T1 at small scale), SynGR's gain with and without the planted
synergy, and the encoder's attention share of the second modality before and after training (F1)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {
    "text": "text IDs",
    "image": "2nd-modality IDs",
    "fused": "aligned fusion",
    "concat": "concat (MQL4GRec-like)",
    "syngr": "SynGR",
}


def recall_figure(m: dict, path: str) -> None:
    benches = list(m["benchmarks"])
    fig, axes = subplots(1, 2, width=4.2)
    for ax, metric in zip(axes[0], ("hr@10", "ndcg@10"), strict=True):
        for b, bench in enumerate(benches):
            variants = m["benchmarks"][bench]["variants"]
            width = 0.8 / (len(variants) + 1)
            for v, (name, values) in enumerate(variants.items()):
                x = np.asarray(values[metric], dtype=float)
                ax.bar(
                    b + v * width,
                    np.mean(x),
                    width,
                    yerr=np.std(x),
                    color=f"C{list(LABELS).index(name)}",
                    label=LABELS[name] if b == 0 or name not in m["benchmarks"][benches[0]]["variants"] else None,
                )
            ax.bar(
                b + len(variants) * width,
                m["benchmarks"][bench]["popularity"][metric],
                width,
                color="0.6",
                label="popularity" if b == 0 else None,
            )
        ax.set_xticks(np.arange(len(benches)) + 0.35, benches, rotation=15)
        ax.set(ylabel=metric.upper())
    axes[0][0].legend(fontsize=6)
    save(fig, path)


def synergy_gap_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.6)
    ax = axes[0][0]
    benches = [b for b in m["benchmarks"] if {"syngr", "concat"} <= set(m["benchmarks"][b]["variants"])]
    for i, bench in enumerate(benches):
        v = m["benchmarks"][bench]["variants"]
        gaps = np.asarray(v["syngr"]["ndcg@10"], dtype=float) - np.asarray(v["concat"]["ndcg@10"], dtype=float)
        ax.scatter(np.full(len(gaps), i), gaps, color="C0", s=14)
        ax.plot([i - 0.2, i + 0.2], [np.mean(gaps)] * 2, color="C3")
    ax.axhline(0.0, color="0.5", lw=0.8)
    ax.set_xticks(range(len(benches)), benches, rotation=15)
    ax.set(ylabel="NDCG@10 SynGR - concat")
    save(fig, path)


def attention_share_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.6)
    ax = axes[0][0]
    v = m["benchmarks"]["synthetic_on"]["variants"]
    for i, name in enumerate(n for n in ("concat", "syngr") if n in v):
        for j, when in enumerate(("share_before", "share_after")):
            x = np.asarray(v[name][when], dtype=float)
            ax.bar(
                i + 0.4 * j,
                np.mean(x),
                0.38,
                yerr=np.std(x),
                color=f"C{j}",
                label=("before training", "after training")[j] if i == 0 else None,
            )
    ax.axhline(0.5, color="0.5", lw=0.8)
    ax.set_xticks([0.2, 1.2], ["concat", "SynGR"])
    ax.set(ylabel="attention share, 2nd modality")
    ax.legend(fontsize=7)
    save(fig, path)


def main(job) -> None:
    m = read_json(job.input.metrics)
    recall_figure(m, job.output.recall)
    synergy_gap_figure(m, job.output.synergy_gap)
    attention_share_figure(m, job.output.attention_share)
