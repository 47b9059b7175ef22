"""Stage: fitted linear rates per run, the Lyapunov check, metrics.json and claims.json."""

from __future__ import annotations

import numpy as np
import xarray as xr

from repro.papers.talda.claims import CLAIMS
from repro.papers.talda.methods import METHODS
from repro.papers.talda.rates import fit_rate
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, write_json

REQUIRED = ("error", "calls", "lyapunov", "eta_x", "eta_y", "rejected", "active")


def open_runs(path: str) -> xr.Dataset:
    try:
        ds = xr.open_zarr(path).load()
    except (OSError, ValueError, KeyError) as err:
        raise InputError(path, f"cannot open the runs store ({err})") from err
    missing = [v for v in REQUIRED if v not in ds]
    if missing:
        raise InputError(path, f"missing variables {missing}")
    return ds


def rate_table(ds: xr.Dataset, fit_cfg: dict) -> list[dict]:
    """One row per (algorithm, steps, instance): slope per iteration and per oracle call, R^2."""
    rows = []
    for algorithm in ds.algorithm.values:
        for steps in ds.steps.values:
            run = ds.sel(algorithm=algorithm, steps=steps)
            for i in range(ds.sizes["instance"]):
                error = run.error.values[i]
                per_iter = fit_rate(error, np.arange(error.size), **fit_cfg)
                per_call = fit_rate(error, run.calls.values[i], **fit_cfg)
                rows.append(
                    {
                        "algorithm": str(algorithm),
                        "steps": str(steps),
                        "instance": i,
                        "family": str(ds.family.values[i]),
                        "dim": int(ds.dim.values[i]),
                        "coupling": float(ds.coupling.values[i]),
                        "seed": int(ds.seed.values[i]),
                        "slope_per_iteration": per_iter["slope"],
                        "slope_per_call": per_call["slope"],
                        "r2": per_iter["r2"],
                        "final_error": float(error[-1]),
                    }
                )
    return rows


def median_slope(rows: list[dict], algorithm: str, steps: str, **match) -> float:
    sel = [
        r["slope_per_call"]
        for r in rows
        if r["algorithm"] == algorithm and r["steps"] == steps and all(r[k] == v for k, v in match.items())
    ]
    return float(np.median(sel)) if sel else float("nan")


def speed(slope: float) -> float:
    """Convergence exponent -slope (larger is faster). A diverged run (slope +inf) or one whose error grows
    counts as 0; a missing fit (NaN: no data, too few points) stays NaN, so the claims it feeds fail instead of
    reading it as a method that does not converge."""
    if np.isnan(slope):
        return float("nan")
    return float(np.maximum(-slope, 0.0))


def ratio(a: float, b: float) -> float:
    """a / b, NaN when b is 0 or either is NaN (no floor that would turn a missing number into a huge one)."""
    return float(a / b) if b != 0 and np.isfinite(a) and np.isfinite(b) else float("nan")


def rejection_rates(ds: xr.Dataset) -> dict:
    """Share of TALDA's active iterations whose descent-ascent step the Lyapunov safeguard rejected, per step
    policy and family, and over all instances."""
    out = {}
    for steps in ds.steps.values:
        rejected, active = ds.rejected.sel(steps=steps).values, ds.active.sel(steps=steps).values
        families = ds.family.values
        out[str(steps)] = {
            str(f): float(np.sum(rejected[families == f]) / np.sum(active[families == f])) for f in np.unique(families)
        } | {"all": float(np.sum(rejected) / np.sum(active))}
    return out


def summarise(ds: xr.Dataset, rows: list[dict]) -> dict:
    couplings = sorted({r["coupling"] for r in rows if r["family"] == "quadratic"})
    weak, strong = couplings[0], couplings[-1]
    lyap = ds.lyapunov.values
    increase = np.diff(lyap, axis=-1) / np.maximum(lyap[..., :-1], np.finfo(float).tiny)
    curve = {
        steps: {a: [median_slope(rows, a, steps, family="quadratic", coupling=c) for c in couplings] for a in METHODS}
        for steps in ("theory", "tuned")
    }
    weak_speed = {
        steps: {a: speed(median_slope(rows, a, steps, family="quadratic", coupling=weak)) for a in METHODS}
        for steps in ("theory", "tuned")
    }
    pl_families = sorted({r["family"] for r in rows})
    return {
        "couplings": couplings,
        "median_slope_per_call_vs_coupling": curve,
        "weak_coupling": weak,
        "speed_at_weak_coupling": weak_speed,
        "talda_min_r2": {
            f: float(
                np.min(
                    [r["r2"] for r in rows if r["algorithm"] == "talda" and r["steps"] == "theory" and r["family"] == f]
                )
            )
            for f in pl_families
        },
        "talda_max_relative_w_increase": float(np.max(increase)),
        "improvement_weak_over_strong": {
            steps: {
                a: ratio(
                    speed(median_slope(rows, a, steps, family="quadratic", coupling=weak)),
                    speed(median_slope(rows, a, steps, family="quadratic", coupling=strong)),
                )
                for a in METHODS
            }
            for steps in ("theory", "tuned")
        },
        "talda_rejection_rate": rejection_rates(ds),
        "step_sizes_tuned": {
            a: {
                "eta_x_over_theory": float(
                    np.median(ds.eta_x.sel(algorithm=a, steps="tuned") / ds.eta_x.sel(algorithm=a, steps="theory"))
                )
            }
            for a in METHODS
        },
        "rates": rows,
    }


def main(job) -> None:
    ds = open_runs(job.input.runs)
    rows = rate_table(ds, job.params.settings["fit"])
    metrics = summarise(ds, rows)
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "talda", claims)
