"""Rule entry ``mosaic_evaluate``: roll out every model, write WB2 forecast stores, score, check the claims.

Models: Mosaic (block-sparse, CRPS), dense (dense attention, CRPS), mse (deterministic), compressive (Mosaic-C:
CRPS, a coarser latent grid), persistence, climatology (training-period mean per grid point). Learning checks
compare each trained model's fair CRPS (a deterministic forecast's is its absolute error) on the normalised
channels, per initialisation and averaged over leads and channels, with persistence's (``learning``). Scores per channel and lead with the WB2 definitions.
Exact properties are checked on random tensors (attention) and on the shipped real ERA5 ensemble
(members 1-9 against member 0 as pseudo-truth).
"""

from __future__ import annotations

import logging

import numpy as np
import torch
import xarray as xr

from repro.papers.mosaic import forecast as fc
from repro.papers.mosaic.attention import dense_attention, expand_kv, local_branch, selected_branch
from repro.papers.mosaic.claims import CLAIMS, FULL_SCALE
from repro.papers.mosaic.data import PeriodStates, load_period
from repro.papers.mosaic.metrics import (
    band_spectrum,
    crps_fair,
    crps_fair_pairwise,
    latitude_weights,
    rmse,
    spatial_mean,
    spread_skill,
    zonal_spectrum,
)
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_json, write_json

log = logging.getLogger(__name__)
VARIANTS = ("mosaic", "dense", "mse", "compressive")


def score(forecast: np.ndarray, truth: np.ndarray, latitude: np.ndarray, band: tuple[float, float], k_max: int) -> dict:
    """Per channel, per lead: RMSE of the ensemble mean and of single members, fair CRPS, spread/skill, spectra.

    Spectral ratios are kept for zonal wavenumbers 0..k_max (the resolved ones: a truncated model has no
    truth energy above its truncation, where a ratio means nothing).
    """
    ens_mean = forecast.mean(axis=1)
    n_ch, n_lead = truth.shape[2], truth.shape[1]
    out: dict = {
        "rmse_mean": [],
        "rmse_member": [],
        "crps": [],
        "spread_skill": [],
        "spectrum_ratio_member": [],
        "spectrum_ratio_mean": [],
    }
    for c in range(n_ch):  # every lead at once: the metrics reduce over (init, lat, lon) and keep the lead axis
        f, y, fm = forecast[:, :, :, c], truth[:, :, c], ens_mean[:, :, c]
        out["rmse_mean"].append(rmse(fm, y, latitude).tolist())
        out["rmse_member"].append(np.mean([rmse(f[:, m], y, latitude) for m in range(f.shape[1])], axis=0).tolist())
        out["crps"].append(spatial_mean(crps_fair(f, y, member_axis=1), latitude).mean(axis=0).tolist())
        spread = spread_skill(f, y, latitude) if f.shape[1] > 1 else np.full(n_lead, np.nan)
        out["spread_skill"].append(np.asarray(spread, float).tolist())
        truth_k = band_spectrum(y, latitude, band)[0].mean(axis=0)[:, : k_max + 1]
        s_member = band_spectrum(f, latitude, band)[0].mean(axis=(0, 1))[:, : k_max + 1]
        s_mean = band_spectrum(fm, latitude, band)[0].mean(axis=0)[:, : k_max + 1]
        out["spectrum_ratio_member"].append((s_member / truth_k).tolist())
        out["spectrum_ratio_mean"].append((s_mean / truth_k).tolist())
    return out


def attention_exactness(seed: int) -> dict[str, float]:
    """Max |block-sparse - dense| when the selection covers every block, and when one local block spans all tokens."""
    g = torch.Generator().manual_seed(seed)
    b, h, hk, n, d, block = 2, 4, 2, 256, 16, 16
    q = torch.randn(b, h, n, d, generator=g, dtype=torch.float64)
    k = torch.randn(b, hk, n, d, generator=g, dtype=torch.float64)
    v = torch.randn(b, hk, n, d, generator=g, dtype=torch.float64)
    dense = dense_attention(q, expand_kv(k, h), expand_kv(v, h))
    selected = selected_branch(q, k, v, block, n // block)
    local = local_branch(q, expand_kv(k, h), expand_kv(v, h), n)
    partial = selected_branch(q, k, v, block, 2)
    return {
        "selected_all_blocks": float((selected - dense).abs().max()),
        "local_whole_sequence": float((local - dense).abs().max()),
        "selected_two_blocks": float((partial - dense).abs().max()),
    }


def sample_checks(store: str) -> dict[str, float]:
    """Metric identities on the real ERA5 10-member sample: members 1-9 against member 0."""
    ds = xr.open_zarr(store)
    z = ds["geopotential"].sel(level=500).values.astype(np.float64)  # (time, member, lat, lon)
    lat = ds["latitude"].values
    truth, members = z[:, 0], z[:, 1:]
    rank, pair = crps_fair(members, truth, 1), crps_fair_pairwise(members, truth, 1)
    member_rmse = np.mean([rmse(members[:, m], truth, lat) for m in range(members.shape[1])])
    spectrum, _ = zonal_spectrum(truth[0], lat)
    circ = 2 * np.pi * 6.371e6 * np.cos(np.deg2rad(lat))
    parseval = circ * (truth[0] ** 2).mean(axis=-1)
    return {
        "crps_rank_vs_pairwise_max_rel": float(np.max(np.abs(rank - pair)) / np.max(np.abs(pair))),
        "crps_z500_m2s2": float(spatial_mean(rank, lat).mean()),
        "rmse_ensemble_mean_z500": float(rmse(members.mean(axis=1), truth, lat)),
        "rmse_member_mean_z500": float(member_rmse),
        "spread_skill_z500": float(spread_skill(members, truth, lat)),
        "latitude_weight_mean": float(latitude_weights(lat).mean()),
        "parseval_max_rel": float(np.max(np.abs(spectrum.sum(-1) - parseval)[1:-1] / parseval[1:-1])),
    }


def upper_half(k_max: int) -> np.ndarray:
    """The upper half of the resolved zonal wavenumbers, k_max/2 < k <= k_max."""
    k = np.arange(k_max + 1)
    return k > k_max / 2


def per_init(
    forecasts: dict[str, np.ndarray], truth: np.ndarray, latitude: np.ndarray, band, k_max: int, ch: int, lead: int
) -> dict:
    """Per initialisation, headline channel, one lead: CRPS and the members' upper-half spectral ratio of each
    model (what the claims' bootstrap intervals resample), and the band spectra per wavenumber of the truth,
    the members, their error and the input state (what explains the spectral ratio at large scales)."""
    y = truth[:, lead, ch]
    s_true, _ = band_spectrum(y, latitude, band)
    s_true = s_true[:, : k_max + 1]
    hi = upper_half(k_max)
    out: dict = {"crps": {}, "high_k_ratio": {}, "spectra": {"truth": s_true.mean(0).tolist()}}
    for name, f in forecasts.items():
        members = f[:, :, lead, ch]
        out["crps"][name] = spatial_mean(crps_fair(members, y, member_axis=1), latitude).tolist()
        s_members, _ = band_spectrum(members, latitude, band)
        s_members = s_members.mean(1)[:, : k_max + 1]
        out["high_k_ratio"][name] = (s_members[:, hi] / s_true[:, hi]).mean(1).tolist()
        if name in VARIANTS:
            s_error, _ = band_spectrum(members - y[:, None], latitude, band)
            out["spectra"][name] = s_members.mean(0).tolist()
            out["spectra"][f"{name}_error"] = s_error.mean(1)[:, : k_max + 1].mean(0).tolist()
    s_input, _ = band_spectrum(forecasts["persistence"][:, 0, 0, ch], latitude, band)
    out["spectra"]["input"] = s_input[:, : k_max + 1].mean(0).tolist()
    return out


def main(job) -> None:
    s = job.params.settings
    ev = s["evaluate"]
    seed = job.params.seed
    test = load_period(job.input.store, job.input.norm_stats, tuple(s["splits"]["test"]))
    # climatology: the training period's mean state, streamed (556 GB of float32 at paper scale)
    climate = PeriodStates(job.input.store, job.input.norm_stats, tuple(s["splits"]["train"])).time_mean()
    steps = ev["lead_steps"]
    inits = np.arange(1, len(test.times) - steps, ev["init_every"])
    step_hours = int((test.times[1] - test.times[0]).total_seconds() // 3600)
    band = tuple(ev["spectrum_band"])
    k_max = ev.get("max_wavenumber") or len(test.longitude) // 2
    truth = test.physical(fc.truth_windows(test.states, inits, steps), channel_axis=2)
    forecasts = {}
    for name in s["variants"]:
        model, _ = fc.load_model(getattr(job.input, name), test.latitude, test.longitude)
        members = 1 if name == "mse" else ev["members"]
        forecasts[name] = fc.rollout(model, test.states, inits, steps, members, seed)
    forecasts["persistence"] = fc.persistence(test.states, inits, steps)
    forecasts["climatology"] = fc.climatology(climate, len(inits), steps)
    normalised_truth = fc.truth_windows(test.states, inits, steps)
    learning = {
        name: spatial_mean(crps_fair(f, normalised_truth, member_axis=1), test.latitude).mean(axis=(1, 2)).tolist()
        for name, f in forecasts.items()
    }
    scores, physical_forecasts = {}, {}
    headline = test.channels.index(ev["headline_channel"])
    for name, normalised in forecasts.items():
        physical = test.physical(normalised, channel_axis=3)
        physical_forecasts[name] = physical
        ds = fc.to_dataset(physical, test.channels, test.times[inits], step_hours, test.latitude, test.longitude)
        if name in VARIANTS:
            fc.write_forecast(ds, getattr(job.output, f"forecast_{name}"))
        scores[name] = score(physical, truth, test.latitude, band, k_max)
    _, wavelength = band_spectrum(truth[:, 0, 0], test.latitude, band)
    wavelength = wavelength[: k_max + 1]
    metrics = {
        "channels": test.channels,
        "lead_hours": [step_hours * (i + 1) for i in range(steps)],
        "n_inits": int(len(inits)),
        "members": ev["members"],
        "spectrum_band_deg": list(band),
        "max_wavenumber": int(k_max),
        "wavelength_km": wavelength.tolist(),
        "headline_channel": ev["headline_channel"],
        "scores": scores,
        "per_init": per_init(physical_forecasts, truth, test.latitude, band, k_max, headline, steps - 1),
        "learning": learning,
        "attention_exactness": attention_exactness(seed),
        "attention_cost": read_json(job.input.cost)["rows"],
        "era5_sample": sample_checks(job.input.sample),
    }
    reported = load_reported(job.input.reported)
    metrics["reported"] = {key: reported[key]["value"] for key in FULL_SCALE}
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, reported)
    write_claims(job.output.claims, "mosaic", claims)
