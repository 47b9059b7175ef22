"""Stage: the reduced-column profile with the cruel/cool split and cool-bit recovery (F1), and attempts
against dataset size and repetition with the fitted power law (F2)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json


def profile_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 2, width=3.6)
    ax = axes[0][0]
    ratio = np.asarray(m["column_std_ratio"])
    cruel = np.zeros(ratio.size, dtype=bool)
    cruel[m["cruel_columns"]] = True
    ax.bar(np.flatnonzero(cruel), ratio[cruel], color="#D55E00", label="cruel")
    ax.bar(np.flatnonzero(~cruel), ratio[~cruel], color="#0072B2", label="cool")
    ax.set(
        xlabel="column of R A (index)",
        ylabel="column std / uniform std (ratio)",
        title=f"Spearman {m['column_spearman']:.2f}",
    )
    ax.legend()
    ax = axes[0][1]
    rows = m["cool_recovery"]
    names = ["stepwise", "per_column", "full_secret_verified"]
    ax.bar(range(3), [np.mean(rows[k]) for k in names])
    ax.set_xticks(range(3), ["stepwise", "per-column", "full secret\nverified"])
    ax.set(ylim=(0, 1.05), ylabel="fraction of secrets", title="cool bits given the true cruel bits")
    save(fig, path)


def attempts_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.2, height=3.0)
    ax = axes[0][0]
    points = m["power_law"]["mean_log_attempts"]
    for r in sorted({p["r"] for p in points}):
        sel = [p for p in points if p["r"] == r]
        ax.plot([p["N"] for p in sel], [np.exp(p["value"]) for p in sel], "o-", label=f"r = {r}")
    ax.axhline(np.exp(np.mean(m["power_law"]["log_attempts_exhaustive"])), color="k", ls=":", label="exhaustive")
    fit = m["power_law"]
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="unique training samples N (count)",
        ylabel="attempts (count, geometric mean over secrets)",
        title=f"b = {fit['slope_log_n']['value']:.2f}, c = {fit['slope_log_r']['value']:.2f}",
    )
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_formatter(NullFormatter())
    ax.legend(title="repetitions r", fontsize=7)
    save(fig, path)


def main(job) -> None:
    m = read_json(job.input.metrics)
    profile_figure(m, job.output.column_profile)
    attempts_figure(m, job.output.attempts_power_law)
