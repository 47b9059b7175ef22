"""Stage: HR@10/NDCG@10 per variant and benchmark (T1 at small scale), SynGR's gain with and without the planted
synergy, and the encoder's attention share of the second modality before and after training (F1)."""

from __future__ import annotations

import numpy as np

from repro.papers.syngr.claims import per_user
from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json

LABELS = {
    "text": "text IDs",
    "image": "2nd-modality IDs",
    "fused": "aligned fusion",
    "concat": "concat (MQL4GRec-like)",
    "syngr": "SynGR",
}


def interval(values: np.ndarray, statistic=np.mean, n: int = 500) -> tuple[float, float, float]:
    """Statistic of per-user values (a tuple of arrays for a ratio) and its 95% bootstrap interval over users."""
    arrays = values if isinstance(values, tuple) else (values,)
    rng = np.random.default_rng(0)
    point = float(statistic(*arrays))
    draws = [statistic(*(a[idx] for a in arrays)) for idx in rng.integers(len(arrays[0]), size=(n, len(arrays[0])))]
    low, high = np.percentile(draws, [2.5, 97.5])
    return point, float(low), float(high)


def recall_figure(m: dict, path: str) -> None:
    benches = list(m["benchmarks"])
    fig, axes = subplots(1, 2, width=4.2)
    for ax, metric in zip(axes[0], ("hr@10", "ndcg@10"), strict=True):
        for b, bench in enumerate(benches):
            variants = m["benchmarks"][bench]["variants"]
            width = 0.8 / (len(variants) + 1)
            columns = [
                (name, per_user(np.asarray(v["user_rank"], dtype=float), metric)) for name, v in variants.items()
            ]
            columns.append(("popularity", per_user(np.asarray(m["benchmarks"][bench]["popularity_rank"]), metric)))
            for v, (name, x) in enumerate(columns):
                mean, low, high = interval(x)
                ax.bar(
                    b + v * width,
                    mean,
                    width,
                    yerr=[[mean - low], [high - mean]],
                    color="0.6" if name == "popularity" else f"C{list(LABELS).index(name)}",
                    label=LABELS.get(name, name)
                    if b == 0 or name not in m["benchmarks"][benches[0]]["variants"]
                    else None,
                )
        ax.set_xticks(np.arange(len(benches)) + 0.35, benches, rotation=15)
        ax.set(ylabel=f"{metric.upper()} (fraction of test users; 95% CI)")
    axes[0][0].legend(fontsize=6)
    save(fig, path)


def synergy_gap_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.8)
    ax = axes[0][0]
    benches = [b for b in m["benchmarks"] if {"syngr", "concat"} <= set(m["benchmarks"][b]["variants"])]
    for i, bench in enumerate(benches):
        v = m["benchmarks"][bench]["variants"]
        ours = per_user(np.asarray(v["syngr"]["user_rank"], dtype=float), "ndcg@10")
        base = per_user(np.asarray(v["concat"]["user_rank"], dtype=float), "ndcg@10")
        gain, low, high = interval((ours, base), lambda a, b: 100.0 * (np.mean(a) / np.mean(b) - 1.0))
        ax.errorbar(
            [i],
            [gain],
            yerr=[[gain - low], [high - gain]],
            fmt="o",
            color="C0",
            capsize=3,
            label="SynGR vs concat (95% CI over users)" if i == 0 else None,
        )
    paper = m.get("reported", {}).get("avg_improvement_over_baselines")
    if paper is not None:
        ax.axhline(paper, color="C3", ls="--", lw=0.9, label=f"paper: +{paper:g} % (mean of 3 Amazon sets)")
    ax.axhline(0.0, color="0.5", lw=0.8)
    ax.set_xticks(range(len(benches)), benches, rotation=15)
    ax.set(ylabel="NDCG@10 gain of SynGR over concat (%)")
    ax.legend(fontsize=6)
    save(fig, path)


def attention_share_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.6)
    ax = axes[0][0]
    v = m["benchmarks"]["synthetic_on"]["variants"]
    for i, name in enumerate(n for n in ("concat", "syngr") if n in v):
        before = np.asarray(v[name]["share_before"], dtype=float)
        after = np.mean(np.atleast_2d(np.asarray(v[name]["user_share_after"], dtype=float)), axis=0)
        mean, low, high = interval(after)
        ax.bar(i, np.mean(before), 0.38, color="C0", label="before training (mean)" if i == 0 else None)
        ax.bar(
            i + 0.4,
            mean,
            0.38,
            yerr=[[mean - low], [high - mean]],
            color="C1",
            label="after training (95% CI over users)" if i == 0 else None,
        )
    ax.axhline(0.5, color="0.5", lw=0.8, label="even split")
    ax.set_xticks([0.2, 1.2], ["concat", "SynGR"])
    ax.set(ylabel="attention share of the 2nd modality (fraction)")
    ax.legend(fontsize=7)
    save(fig, path)


def main(job) -> None:
    m = read_json(job.input.metrics)
    recall_figure(m, job.output.recall)
    synergy_gap_figure(m, job.output.synergy_gap)
    attention_share_figure(m, job.output.attention_share)
