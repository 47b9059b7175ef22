"""Stage: persistence and SL-extrapolation baselines, event scores by lead time for every forecast,
metrics.json and claims.json, streamed over the test samples in chunks.

Scores (repro.metrics.fields): CSI / POD / FAR / HSS per threshold and lead with counts pooled over all test
sequences, on the raw grid and after max-pooling (``pools``); CSI-M averages CSI over leads then thresholds.
"Late" leads are the last half. Missing observations (NaN) are left out of every count and error. Intervals
resample test *events* (a SEVIR event gives several overlapping sequences; a simulated sequence is its own
event), with the same resamples for every method, so differences between methods are paired
(``bootstrap`` in metrics.json: ``n`` replicates of each score and method). Learning checks compare each
trained model's per-event mean squared error with persistence's (``event_mse``). Drift diagnostic: the fraction
of forecast values outside the data range [0, 255].
"""

from __future__ import annotations

import numpy as np

from repro.data.fields.store import open_fields
from repro.metrics.fields import csi_from_counts, event_counts
from repro.metrics.fields import scores as count_scores
from repro.papers.pdrf.claims import CLAIMS
from repro.papers.pdrf.forecast_keys import method_name
from repro.papers.pdrf.nowcast import sl_from_motion
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_json, write_json

BOOTSTRAP = 2000
KEYS = ("hits", "misses", "false_alarms", "correct_negatives")


def pooled_scores(counts: dict[int, np.ndarray], thresholds: list[float], drift: float) -> dict:
    """Scores from per-event counts summed over events (counts[pool]: (event, threshold, lead, 4))."""
    raw = counts[1].sum(axis=0)
    leads = raw.shape[1]
    late = slice(leads // 2, None)
    by_lead = {}
    for i, thr in enumerate(thresholds):
        per = [count_scores(dict(zip(KEYS, raw[i, t]))) for t in range(leads)]
        by_lead[f"{thr:g}"] = {k: [s[k] for s in per] for k in ("csi", "pod", "hss")}
    csi = csi_from_counts(raw)
    pod = np.array([[v["pod"][t] for t in range(leads)] for v in by_lead.values()])
    hss = np.array([[v["hss"][t] for t in range(leads)] for v in by_lead.values()])
    out = {
        "csi_m": float(np.mean(csi)),
        "hss_m": float(np.mean(hss)),
        "late_csi_m": float(np.mean(csi[:, late])),
        "late_pod_m": float(np.mean(pod[:, late])),
        "late_csi_top": float(np.mean(csi[-1, late])),
        "late_pod_top": float(np.mean(pod[-1, late])),
        "out_of_range": drift,
        "by_lead": by_lead,
    }
    out |= {f"csi_m_pool{p}": float(np.mean(csi_from_counts(c.sum(axis=0)))) for p, c in counts.items() if p != 1}
    return out


def bootstrap_scores(counts: dict[str, np.ndarray], seed: int) -> dict:
    """Replicates of csi_m, late_csi_m and late_csi_top per method, events resampled the same way for all."""
    n_events = len(next(iter(counts.values())))
    rng = np.random.default_rng([seed, 5])
    weights = np.stack([np.bincount(rng.integers(0, n_events, n_events), minlength=n_events) for _ in range(BOOTSTRAP)])
    out: dict = {"csi_m": {}, "late_csi_m": {}, "late_csi_top": {}}
    for name, c in counts.items():
        csi = csi_from_counts(np.einsum("be,etlk->btlk", weights, c))  # (replicate, threshold, lead)
        late = slice(csi.shape[-1] // 2, None)
        out["csi_m"][name] = np.mean(csi, axis=(1, 2)).tolist()
        out["late_csi_m"][name] = np.mean(csi[:, :, late], axis=(1, 2)).tolist()
        out["late_csi_top"][name] = np.mean(csi[:, -1, late], axis=1).tolist()
    return {"n": BOOTSTRAP, "resampled": "test events", "scores": out}


def main(job) -> None:
    settings = job.params.settings
    ds = open_fields(job.input.radar, ("precip",), load=False, missing_ok=("precip",))
    fc = open_fields(job.input.forecasts, load=False)
    frames_in = int(ds.attrs["frames_in"])
    periodic = bool(ds.attrs["periodic"])
    thresholds = [float(t) for t in str(ds.attrs["thresholds"]).split(",")]
    rows = np.asarray(fc["row"].values, dtype=np.int64)
    events = np.asarray(ds["event"].values)[rows] if "event" in ds.coords else rows.astype(str)
    _, event_index = np.unique(events, return_inverse=True)
    n_events = int(event_index.max()) + 1
    names = {key: method_name(key) for key in fc.data_vars}
    methods = ["persistence", "sl_extrapolation", *names.values()]
    pools = settings["pools"]
    counts = {
        m: {p: np.zeros((n_events, len(thresholds), ds.precip.shape[1] - frames_in, 4)) for p in pools} for m in methods
    }
    sq_err = {m: np.zeros(n_events) for m in methods}
    n_valid = np.zeros(n_events)
    outside = {m: 0.0 for m in methods}
    n_values = 0
    chunk = settings["chunk"]
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        seq = np.asarray(ds.precip.isel(sample=part).values, dtype=np.float32)
        past, obs = seq[:, :frames_in], seq[:, frames_in:]
        motion = np.asarray(ds.motion_est.isel(sample=part).values)
        forecasts = {
            "persistence": np.repeat(np.nan_to_num(past[:, -1:], nan=0.0), obs.shape[1], axis=1),
            "sl_extrapolation": sl_from_motion(past, motion, obs.shape[1], periodic),
        }
        forecasts |= {names[k]: np.asarray(fc[k].isel(sample=slice(start, start + len(part))).values) for k in names}
        ev = event_index[start : start + len(part)]
        valid = np.isfinite(obs)
        np.add.at(n_valid, ev, valid.sum(axis=(1, 2, 3)))
        n_values += obs.size
        for m, pred in forecasts.items():
            for p in pools:
                np.add.at(counts[m][p], ev, event_counts(pred, obs, thresholds, p))
            np.add.at(sq_err[m], ev, np.where(valid, (pred - np.nan_to_num(obs)) ** 2, 0.0).sum(axis=(1, 2, 3)))
            outside[m] += float(np.sum((pred < 0) | (pred > 255)))
    event_mse = {m: (sq_err[m] / np.maximum(n_valid, 1)).tolist() for m in methods}
    metrics = {
        "thresholds": thresholds,
        "n_events": n_events,
        "n_sequences": int(len(rows)),
        "missing_fraction": float(1 - n_valid.sum() / max(n_values, 1)),
        "skill": {m: pooled_scores(counts[m], thresholds, outside[m] / max(n_values, 1)) for m in methods},
        "event_mse": event_mse,
        "bootstrap": bootstrap_scores({m: counts[m][1] for m in methods}, int(job.params.seed)),
        "checks": read_json(job.input.training)["checks"],
    }
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "pdrf", claims)
