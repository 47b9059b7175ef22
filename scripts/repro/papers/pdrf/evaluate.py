"""Stage: persistence and SL-extrapolation baselines, event scores by lead time for every forecast,
metrics.json and claims.json.

Scores (repro.metrics.fields): CSI / POD / FAR / HSS per threshold and lead with counts pooled over all
test sequences, on the raw grid and after 4x4 and 16x16 max-pooling; CSI-M averages CSI over leads then
thresholds. "Late" leads are the last half. Drift diagnostic: the fraction of forecast values outside
the data range [0, 255].
"""

from __future__ import annotations

import numpy as np

from repro.data.fields.store import open_fields, split_of
from repro.metrics.fields import csi_m, skill_by_lead
from repro.papers.pdrf.claims import CLAIMS
from repro.papers.pdrf.nowcast import sl_forecasts
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.fields_io import load_arrays
from repro.workflow.io import read_json, write_json


def scores(pred: np.ndarray, obs: np.ndarray, thresholds: list[float], pools: list[int]) -> dict:
    skill = skill_by_lead(pred, obs, thresholds, pools)
    late = slice(obs.shape[1] // 2, None)
    raw = skill["pool1"]
    top = raw[f"{thresholds[-1]:g}"]
    return {
        "csi_m": csi_m(skill),
        **{f"csi_m_pool{p}": csi_m(skill, p) for p in pools if p != 1},
        "hss_m": float(np.mean([np.mean(v["hss"]) for v in raw.values()])),
        "late_csi_m": float(np.mean([np.mean(v["csi"][late]) for v in raw.values()])),
        "late_pod_m": float(np.mean([np.mean(v["pod"][late]) for v in raw.values()])),
        "late_csi_top": float(np.mean(top["csi"][late])),
        "late_pod_top": float(np.mean(top["pod"][late])),
        "out_of_range": float(np.mean((pred < 0) | (pred > 255))),
        "by_lead": {thr: {k: v[k] for k in ("csi", "pod", "hss")} for thr, v in raw.items()},
    }


def main(job) -> None:
    settings = job.params.settings
    ds = open_fields(job.input.radar, ("precip",))
    frames_in = int(ds.attrs["frames_in"])
    thresholds = [float(t) for t in str(ds.attrs["thresholds"]).split(",")]
    test = split_of(ds, "test").precip.values
    past, obs = test[:, :frames_in], test[:, frames_in:]
    preds = load_arrays(job.input.predictions)
    motion = settings["motion"]
    methods = {
        "persistence": {"s0": np.repeat(past[:, -1:], obs.shape[1], axis=1)},
        "sl_extrapolation": {"s0": sl_forecasts(past, obs.shape[1], motion["window"], motion["ridge"])},
    }
    for key, value in preds.items():
        parts = key.split("/")
        name = parts[0] if len(parts) == 2 else f"{parts[0]}_{parts[2]}"
        methods.setdefault(name, {})[parts[1]] = value
    pools = settings["pools"]
    metrics = {
        "thresholds": thresholds,
        "skill": {m: {s: scores(p, obs, thresholds, pools) for s, p in per.items()} for m, per in methods.items()},
        "checks": read_json(job.input.training)["checks"],
    }
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "pdrf", claims)
