"""Stage: predicted vs empirical power (F1) and distortion (F2), the empirical Pareto front with the
calibrated choices and the baselines (F3)."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json


def power_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.6, height=3.4)
    ax = axes[0][0]
    for i, t in enumerate(sorted({c["T"] for c in m["cells"]})):
        cells = [c for c in m["cells"] if c["T"] == t]
        emp = np.array([c["empirical"]["rate"] for c in cells])
        err = np.array([[e - c["empirical"]["low"], c["empirical"]["high"] - e] for e, c in zip(emp, cells)]).T
        ax.errorbar([c["predicted"] for c in cells], emp, yerr=err, fmt="o", ms=3, color=f"C{i}", label=f"T = {t}")
    real = m.get("real_lm", {}).get("cells", [])
    if real:
        emp = np.array([c["empirical"]["rate"] for c in real])
        err = np.array([[e - c["empirical"]["low"], c["empirical"]["high"] - e] for e, c in zip(emp, real)]).T
        label = f"SmolLM2, T = {real[0]['T']}"
        ax.errorbar([c["predicted"] for c in real], emp, yerr=err, fmt="s", ms=5, mfc="none", color="k", label=label)
    ax.plot([0, 1], [0, 1], "k--", lw=0.8, label="prediction = empirical")
    ax.set(
        xlabel="predicted power (fraction of sequences detected)",
        ylabel="empirical power (fraction detected, 95% CI)",
    )
    ax.legend()
    save(fig, path)


def distortion_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=3.6, height=3.4)
    ax = axes[0][0]
    t = max(c["T"] for c in m["cells"])
    for i, gamma in enumerate(sorted({c["gamma"] for c in m["cells"]})):
        cells = [c for c in m["cells"] if c["T"] == t and c["gamma"] == gamma]
        ax.plot(
            [c["kl_predicted"] for c in cells],
            [c["kl_empirical"] for c in cells],
            "o-",
            ms=3,
            color=f"C{i}",
            label=f"gamma = {gamma:g}",
        )
    top = max(c["kl_empirical"] for c in m["cells"])
    ax.plot([0, top], [0, top], "k--", lw=0.8, label="prediction = empirical")
    ax.set(
        xlabel="predicted KL per token (nats, calibration samples)",
        ylabel="empirical KL per token (nats, watermarked)",
    )
    ax.legend()
    save(fig, path)


def pareto_figure(m: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.0, height=3.2)
    ax = axes[0][0]
    t = m["calibration"][0]["choice"]["T"] if m["calibration"][0]["choice"] else None
    cells = [c for c in m["cells"] if c["T"] == t]
    ax.scatter(
        [c["kl_empirical"] for c in cells],
        [c["empirical"]["rate"] for c in cells],
        s=10,
        color="0.6",
        label="grid cells",
    )
    for c in m["calibration"]:
        if c["choice"]:
            ch = c["choice"]
            ax.scatter(
                ch["kl_empirical"],
                ch["empirical"]["rate"],
                marker="*",
                s=80,
                label=f"calibrated, KL <= {c['budget']:g}",
            )
    for k, h in enumerate(m.get("heuristics", [])):
        if h["choice"] is None:
            continue
        start = (float(np.mean(h["heuristic_kl"])), h["heuristic_power"]["rate"])
        end = (float(np.mean(h["choice_kl"])), h["choice_power"]["rate"])
        g, d = h["heuristic"]
        ax.scatter(*start, marker="x", s=40, color=("C4", "C7")[k % 2], label=f"{h['name']} ({g:g}, {d:g})")
        ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "color": ("C4", "C7")[k % 2], "lw": 1.0})
        ax.scatter(*end, marker="D", s=22, facecolor="none", color=("C4", "C7")[k % 2], label="calibrated at its power")
    ax.set(
        xscale="log",
        xlabel="empirical KL per token (nats, log scale)",
        ylabel=f"empirical power at T = {t} (fraction detected)",
    )
    ax.legend(fontsize=6)
    save(fig, path)


def main(job) -> None:
    m = read_json(job.input.metrics)
    power_figure(m, job.output.power)
    distortion_figure(m, job.output.distortion)
    pareto_figure(m, job.output.pareto)
