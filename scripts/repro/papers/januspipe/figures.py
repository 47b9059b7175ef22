"""Stage: simulated pipeline timelines, makespan / bubble / memory per schedule, measured phase costs."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Patch

from repro.reporting.plotting import PALETTE, save, subplots
from repro.workflow.io import read_json

PHASE_COLOURS = dict(zip(("F", "B1", "B2a", "B2b"), PALETTE))
LABELS = {"gpipe": "GPipe", "1f1b": "1F1B", "hanayo": "Hanayo-like", "janus": "JanusPipe-like",
          "symfold_only": "SymFold only", "wavek_only": "WaveK only"}  # fmt: skip


def timeline_figure(metrics: dict, path: str) -> None:
    names = ("1f1b", "hanayo", "janus")
    fig, axes = subplots(len(names), 1, width=7.5, height=1.6)
    end = max(metrics["simulated"][n]["makespan_s"] for n in names) * 1e3
    for ax, name in zip(axes[:, 0], names):
        for device, m, phase, _stage, start, stop in metrics["simulated"][name]["timeline"]:
            ax.barh(
                device, (stop - start) * 1e3, left=start * 1e3, color=PHASE_COLOURS[phase], edgecolor="white", lw=0.3
            )
            if stop - start > 0.02 * end / 1e3:
                ax.text((start + stop) / 2 * 1e3, device, str(m), ha="center", va="center", fontsize=5)
        ax.set(
            xlim=(0, end), ylabel="device", title=f"{LABELS[name]} (bubble {metrics['simulated'][name]['bubble']:.2f})"
        )
        ax.invert_yaxis()
    axes[-1][0].set_xlabel("simulated time (ms, measured CPU phase costs)")
    handles = [Patch(color=c, label=p) for p, c in PHASE_COLOURS.items()]
    axes[0][0].legend(handles=handles, ncol=4, loc="upper right")
    save(fig, path)


def schedules_figure(metrics: dict, path: str) -> None:
    names = list(metrics["makespan_s"])
    boot = metrics["bootstrap"]
    fig, axes = subplots(1, 3, width=3.2, height=3.0, layout="constrained")
    x = np.arange(len(names))
    speed = [metrics["makespan_s"]["1f1b"] / metrics["makespan_s"][n] for n in names]
    spread = [np.asarray(boot["makespan_s"]["1f1b"]) / np.asarray(boot["makespan_s"][n]) for n in names]
    errors = np.abs(np.array([np.percentile(s, [2.5, 97.5]) for s in spread]).T - np.asarray(speed))
    axes[0][0].bar(x, speed, yerr=errors, capsize=2, color=PALETTE[0], label="ours, simulated (95% interval)")
    reported = metrics.get("reported", {})
    for key, baseline, colour in (
        ("throughput_speedup_vs_1f1b_32gpu", "1f1b", PALETTE[3]),
        ("throughput_speedup_vs_hanayo_32gpu", "hanayo", PALETTE[4]),
    ):
        if key in reported:
            axes[0][0].scatter(
                names.index("janus"),
                float(reported[key]) * (1.0 if baseline == "1f1b" else speed[names.index("hanayo")]),
                marker="_",
                s=300,
                color=colour,
                zorder=3,
                label=f"paper, 32 GPUs: {reported[key]}x over {LABELS[baseline]}",
            )
    axes[0][0].axhline(1.0, color="grey", lw=0.8)
    axes[0][0].set(ylabel="simulated speed-up over 1F1B (x)", title="makespan")
    axes[0][0].legend(loc="upper left", fontsize=6)
    memory = [metrics["peak_memory_bytes"][n] / 2**20 for n in names]
    axes[0][1].bar(x, memory, color=PALETTE[1])
    axes[0][1].axhline(memory[names.index("1f1b")], color="grey", lw=0.8, ls="--", label="1F1B")
    axes[0][1].set(ylabel="peak activation memory, busiest device (MiB)", title="memory")
    axes[0][1].legend(loc="upper right")
    for ax in axes[0][:2]:
        ax.set_xticks(x, [LABELS[n] for n in names], rotation=45, ha="right")
    measured = metrics["pipeline"]
    axes[0][2].bar(
        np.arange(len(measured)), [v["throughput_structures_per_s"] for v in measured.values()], color=PALETTE[2]
    )
    axes[0][2].set_xticks(np.arange(len(measured)), [LABELS[n] for n in measured])
    axes[0][2].set(ylabel="training throughput (structures / s)", title="measured, gloo processes (CPU)")
    save(fig, path)


def costs_figure(costs: dict, path: str) -> None:
    unit = np.asarray(costs["unit_costs"]) * 1e3
    fig, axes = subplots(1, 1, width=5.0)
    ax = axes[0][0]
    bottom = np.zeros(len(unit))
    for k, phase in enumerate(PHASE_COLOURS):
        ax.bar(np.arange(len(unit)), unit[:, k], bottom=bottom, color=PHASE_COLOURS[phase], label=phase)
        bottom += unit[:, k]
    ax.set_xticks(np.arange(len(unit)), ["descr."] + [f"L{i}" for i in range(1, len(unit))])
    ax.set(ylabel="measured time per micro-batch (ms)", title="four-phase cost per unit (CPU, median)")
    ax.legend()
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    timeline_figure(metrics, job.output.timeline)
    schedules_figure(metrics, job.output.schedules)
    costs_figure(read_json(job.input.costs), job.output.phase_costs)
