"""Stage: CSI by lead time (F1), forecast panels at the first and last lead (F2), ablation of the
parameterisation, the SL teacher and the NFE (F3)."""

from __future__ import annotations

import numpy as np

from repro.data.fields.store import open_fields
from repro.papers.pdrf.forecast_keys import method_name
from repro.papers.pdrf.nowcast import sl_from_motion
from repro.reporting.plotting import PALETTE, save, subplots
from repro.workflow.io import read_json

MAIN = ("persistence", "sl_extrapolation", "unet", "velocity_rf", "data_rf", "pdrf")
LABELS = {
    "persistence": "persistence",
    "sl_extrapolation": "SL extrapolation",
    "unet": "U-Net (MSE)",
    "velocity_rf": "velocity RF",
    "data_rf": "data-space RF",
    "pdrf": "PDRF (data-space + SL teacher)",
}


def lead_figure(metrics: dict, minutes: float, path: str) -> None:
    thresholds = list(metrics["skill"]["persistence"]["by_lead"])
    fig, axes = subplots(1, len(thresholds), width=2.9)
    for ax, thr in zip(axes[0], thresholds):
        for i, method in enumerate(m for m in MAIN if m in metrics["skill"]):
            curve = np.asarray(metrics["skill"][method]["by_lead"][thr]["csi"], float)
            ax.plot(minutes * np.arange(1, len(curve) + 1), curve, "o-", ms=2, color=PALETTE[i], label=LABELS[method])
        ax.set(title=f"threshold {thr} (VIL 0-255)", xlabel="lead time (min)", ylabel="CSI (pooled over test events)")
    axes[0][0].legend(fontsize=6)
    save(fig, path)


def panels_figure(radar: str, forecasts: str, path: str) -> None:
    ds = open_fields(radar, ("precip",), load=False, missing_ok=("precip",))
    fc = open_fields(forecasts, load=False)
    row = int(fc["row"].values[0])
    frames_in = int(ds.attrs["frames_in"])
    seq = np.asarray(ds.precip.isel(sample=[row]).values)
    obs = seq[:, frames_in:]
    sl = sl_from_motion(
        seq[:, :frames_in], ds.motion_est.isel(sample=[row]).values, obs.shape[1], bool(ds.attrs["periodic"])
    )
    rows = {"observed": obs, "sl_extrapolation": sl}
    rows |= {method_name(k): np.asarray(fc[k].isel(sample=[0]).values) for k in fc.data_vars if "nfe" not in k}
    leads = (0, obs.shape[1] - 1)
    fig, axes = subplots(len(leads), len(rows), width=1.9, height=2.0)
    for r, lead in enumerate(leads):
        for c, (name, field) in enumerate(rows.items()):
            ax = axes[r][c]
            image = ax.imshow(np.clip(field[0, lead], 0, 255), vmin=0, vmax=255, cmap="viridis")
            ax.set(
                title=f"{LABELS.get(name, name)}\nlead {(lead + 1) * float(ds.attrs['dt']):g} min", xticks=[], yticks=[]
            )
            ax.title.set_fontsize(6)
            ax.grid(False)
    fig.subplots_adjust(right=0.9)
    fig.colorbar(image, cax=fig.add_axes([0.92, 0.15, 0.012, 0.7]), label="VIL (0-255)")
    save(fig, path)


def label(name: str) -> str:
    base, _, nfe = name.partition("_nfe")
    return f"{LABELS.get(base, base)}, NFE {nfe}" if nfe else LABELS.get(name, name)


def ablation_figure(metrics: dict, path: str) -> None:
    plain = [m for m in MAIN if m in metrics["skill"] and m != "persistence"]
    sweep = sorted((m for m in metrics["skill"] if "_nfe" in m), key=lambda m: int(m.rsplit("nfe", 1)[1]))
    names = plain + sweep
    boot = metrics["bootstrap"]["scores"]
    fig, axes = subplots(1, 2, width=4.0)
    for ax, score in zip(axes[0], ("late_csi_m", "late_csi_top")):
        for i, name in enumerate(names):
            value = metrics["skill"][name][score]
            low, high = np.percentile(boot[score][name], [2.5, 97.5]) if name in boot[score] else (value, value)
            ax.bar(i, value, color=PALETTE[i % len(PALETTE)], yerr=[[value - low], [high - value]], capsize=2)
        ax.axhline(metrics["skill"]["persistence"][score], color="k", lw=0.8, ls="--", label="persistence")
        ax.set_xticks(range(len(names)), [label(n) for n in names], rotation=45, ha="right", fontsize=6)
        ax.set(ylabel=score.replace("_", " ") + " (CSI)", title=f"{score} (bars: 95% over test events)")
        ax.legend(fontsize=6)
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    minutes = float(open_fields(job.input.radar, load=False).attrs["dt"])
    lead_figure(metrics, minutes, job.output.csi_by_lead)
    panels_figure(job.input.radar, job.input.forecasts, job.output.panels)
    ablation_figure(metrics, job.output.ablation)
