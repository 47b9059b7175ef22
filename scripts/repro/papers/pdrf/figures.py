"""Stage: CSI by lead time (F1), forecast panels at the first and last lead (F2), ablation of the
parameterisation, the SL teacher and the NFE (F3)."""

from __future__ import annotations

import numpy as np

from repro.data.fields.store import open_fields, split_of
from repro.papers.pdrf.nowcast import sl_forecasts
from repro.reporting.plotting import PALETTE, save, subplots
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json

MAIN = ("persistence", "sl_extrapolation", "unet", "velocity_rf", "data_rf", "pdrf")


def lead_figure(metrics: dict, path: str) -> None:
    thresholds = list(next(iter(metrics["skill"]["pdrf"].values()))["by_lead"])
    fig, axes = subplots(1, len(thresholds), width=2.8)
    for ax, thr in zip(axes[0], thresholds):
        for i, method in enumerate(m for m in MAIN if m in metrics["skill"]):
            curves = [s["by_lead"][thr]["csi"] for s in metrics["skill"][method].values()]
            curve = np.nanmean(np.asarray(curves, float), axis=0)
            ax.plot(np.arange(1, len(curve) + 1), curve, "o-", ms=2, color=PALETTE[i], label=method)
        ax.set(title=f"threshold {thr}", xlabel="lead (frames)", ylabel="CSI")
    axes[0][0].legend()
    save(fig, path)


def panels_figure(radar: str, preds: dict, settings: dict, path: str) -> None:
    ds = open_fields(radar, ("precip",))
    frames_in = int(ds.attrs["frames_in"])
    test = split_of(ds, "test").precip.values[:1]
    rows = {
        "observed": test[:, frames_in:],
        "sl_extrapolation": sl_forecasts(test[:, :frames_in], test.shape[1] - frames_in, **settings["motion"]),
    }
    rows |= {m: preds[f"{m}/s0"][:1] for m in ("velocity_rf", "data_rf", "pdrf") if f"{m}/s0" in preds}
    leads = (0, test.shape[1] - frames_in - 1)
    fig, axes = subplots(len(leads), len(rows), width=1.9, height=2.0)
    for r, lead in enumerate(leads):
        for c, (name, field) in enumerate(rows.items()):
            ax = axes[r][c]
            ax.imshow(np.clip(field[0, lead], 0, 255), vmin=0, vmax=255, cmap="viridis")
            ax.set(title=f"{name}, lead {lead + 1}", xticks=[], yticks=[])
            ax.grid(False)
    save(fig, path)


def ablation_figure(metrics: dict, path: str) -> None:
    names = [m for m in metrics["skill"] if m not in ("persistence", "sl_extrapolation")]
    fig, axes = subplots(1, 2, width=4.0)
    for ax, score in zip(axes[0], ("late_csi_m", "late_csi_top")):
        for i, name in enumerate(names):
            values = [s[score] for s in metrics["skill"][name].values()]
            ax.bar(i, np.mean(values), color=PALETTE[i % len(PALETTE)])
            ax.plot([i] * len(values), values, "k.", ms=3)
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
        ax.set(ylabel=score.replace("_", " "), title=f"{score} (dots: seeds)")
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    lead_figure(metrics, job.output.csi_by_lead)
    panels_figure(job.input.radar, load_arrays(job.input.predictions), job.params.settings, job.output.panels)
    ablation_figure(metrics, job.output.ablation)
