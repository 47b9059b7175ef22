"""Rule entry ``mosaic_figures``: spectral ratio vs wavelength, skill vs lead, attention cost vs tokens."""

from __future__ import annotations

import numpy as np

from repro.reporting.plotting import PALETTE, save, subplots
from repro.workflow.io import read_json

MODEL_LABELS = {
    "mosaic": "Mosaic (CRPS, block-sparse)",
    "dense": "dense attention (CRPS)",
    "mse": "MSE (deterministic)",
    "compressive": "Mosaic-C (CRPS, coarse latent)",
    "persistence": "persistence",
    "climatology": "climatology",
}


def spectral_ratio(metrics: dict, channel: int, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.6, height=3.2)
    ax = axes[0, 0]
    wl = np.asarray(metrics["wavelength_km"])
    last = len(metrics["lead_hours"]) - 1
    sc = metrics["scores"]
    curves = [
        ("mosaic", "spectrum_ratio_member", "Mosaic members"),
        ("mosaic", "spectrum_ratio_mean", "Mosaic ensemble mean"),
        ("mse", "spectrum_ratio_member", "MSE forecast"),
        ("compressive", "spectrum_ratio_member", "Mosaic-C members (coarse latent)"),
        ("dense", "spectrum_ratio_member", "dense-attention members"),
    ]
    for model, key, label in curves:
        if model not in sc:
            continue
        ratio = np.asarray(sc[model][key][channel][last])
        ax.plot(wl[1:], ratio[1:], marker="o", ms=3, label=label)
    ax.axhline(1.0, color="k", lw=0.8, label="truth's spectrum (paper: members align, ratio near 1)")
    half = metrics["max_wavenumber"] / 2
    ax.axvspan(wl[1:].min() * 0.95, wl[int(np.floor(half)) + 1], color="0.9", zorder=0, label="upper half (the claims)")
    ax.set_yscale("log")
    ax.set_xscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("zonal wavelength (km)")
    ax.set_ylabel("zonal spectral ratio (forecast / truth)")
    band = metrics["spectrum_band_deg"]
    ax.set_title(
        f"{metrics['channels'][channel]}, lead {metrics['lead_hours'][last]} h, |lat| {band[0]:g}-{band[1]:g}°"
    )
    ax.legend(fontsize=6)
    save(fig, path)


UNITS = {
    "geopotential": "m^2 s^-2",
    "temperature": "K",
    "2m_temperature": "K",
    "u_component_of_wind": "m/s",
    "v_component_of_wind": "m/s",
    "10m_u_component_of_wind": "m/s",
    "10m_v_component_of_wind": "m/s",
    "mean_sea_level_pressure": "Pa",
    "specific_humidity": "kg/kg",
    "vertical_velocity": "Pa/s",
}
HEADLINE = ("geopotential_500", "temperature_850", "2m_temperature")


def units(channel: str) -> str:
    name = channel if channel in UNITS else channel.rpartition("_")[0]
    return UNITS.get(name, "")


def skill(metrics: dict, path: str) -> None:
    """RMSE, CRPS and spread/skill against lead for the paper's headline channels (or the first three), with the
    paper's 240 h numbers drawn where the run reaches that lead."""
    shown = [c for c in HEADLINE if c in metrics["channels"]]
    shown += [c for c in metrics["channels"] if c not in shown][: max(0, 3 - len(shown))]
    keys = [("rmse_mean", "RMSE (ensemble mean)"), ("crps", "fair CRPS"), ("spread_skill", "spread / skill")]
    fig, axes = subplots(len(keys), len(shown), width=3.0, height=2.3)
    lead = np.asarray(metrics["lead_hours"])
    reported = metrics.get("reported", {})
    for j, name in enumerate(shown):
        c = metrics["channels"].index(name)
        for i, (key, label) in enumerate(keys):
            ax = axes[i, j]
            for model, scores in metrics["scores"].items():
                values = np.asarray(scores[key][c], float)
                if np.all(np.isnan(values)):
                    continue
                colour = PALETTE[list(MODEL_LABELS).index(model) % len(PALETTE)] if model in MODEL_LABELS else None
                ax.plot(lead, values, label=MODEL_LABELS.get(model, model), color=colour)
            paper = reported.get(f"{key}_{name}_240h")
            if paper is not None and lead.max() >= 240:
                ax.plot(240, paper, "r*", ms=8, label="paper, 240 h")
            if key == "spread_skill":
                ax.axhline(1.0, color="k", lw=0.8)
            ax.set_title(name if i == 0 else "")
            unit = "" if key == "spread_skill" else f" ({units(name)})"
            ax.set_ylabel(label + unit)
            ax.set_xlabel("lead (h)" if i == len(keys) - 1 else "")
    axes[0, 0].legend(fontsize=6)
    save(fig, path)


def attention_cost(cost: dict, path: str) -> None:
    fig, axes = subplots(1, 1, width=4.2, height=3.0)
    ax = axes[0, 0]
    n = [r["tokens"] for r in cost["rows"]]
    ax.plot(n, [r["dense_s"] * 1e3 for r in cost["rows"]], marker="o", label="dense")
    ax.plot(n, [r["block_sparse_s"] * 1e3 for r in cost["rows"]], marker="s", label="block-sparse (torch reference)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("tokens")
    ax.set_ylabel("forward time (ms)")
    ax.set_title(f"measured on {cost['device']}")
    ax.legend()
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    channel = metrics["channels"].index(job.params.settings["evaluate"]["headline_channel"])
    spectral_ratio(metrics, channel, job.output.spectral_ratio)
    skill(metrics, job.output.skill)
    attention_cost(read_json(job.input.cost), job.output.attention_cost)
