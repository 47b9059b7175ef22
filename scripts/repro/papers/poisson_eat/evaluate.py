"""Stage: gather fidelity, gradient, P-VAE and POGLM results into metrics.json and claims.json."""

from __future__ import annotations

import numpy as np

from repro.papers.poisson_eat.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_json, write_json

MAIN = ("eat_sigmoid", "eat_cubic", "gsm")


def cells(grid: list[dict], method: str, **match) -> list[dict]:
    return [r for r in grid if r["method"] == method and all(r[k] == v for k, v in match.items())]


def read_runs(paths: list[str]) -> dict[str, dict]:
    runs = {}
    for path in paths:
        run = read_json(path)
        if "method" not in run or "vae" not in run or "poglm" not in run:
            raise InputError(path, "not a poisson-eat training result (needs method, vae, poglm)")
        runs[run["method"]] = run
    missing = set(MAIN) - set(runs)
    if missing:
        raise InputError(paths[0] if paths else "runs", f"missing training results for {sorted(missing)}")
    return runs


def vae_summary(run: dict) -> dict:
    """Test ELBO per temperature (mean over seeds) and its spread (max - min) across temperatures; per test image
    (the same images for every method and temperature) the ELBO per temperature and the trivial model's."""
    taus = sorted({r["tau"] for r in run["vae"]})
    elbo = np.array([np.mean([r["test_elbo"] for r in run["vae"] if r["tau"] == t]) for t in taus])
    per_image = [np.mean([r["test_elbo_per_image"] for r in run["vae"] if r["tau"] == t], axis=0) for t in taus]
    return {
        "taus": taus,
        "test_elbo": elbo.tolist(),
        "spread": float(np.max(elbo) - np.min(elbo)),
        "mean_elbo": float(np.mean(elbo)),
        "test_elbo_per_image": [e.tolist() for e in per_image],
        "trivial_elbo_per_image": run["vae"][0]["trivial_elbo_per_image"],
    }


def variance_bias(grid: list[dict]) -> list[dict]:
    """Per (rate, tau): cubic and sigmoid sample variances with their standard errors (the Poisson variance is
    the rate)."""
    out = []
    for c in cells(grid, "eat_cubic"):
        s = cells(grid, "eat_sigmoid", rate=c["rate"], tau=c["tau"])
        if len(s) != 1:
            raise ValueError(f"no sigmoid cell for rate {c['rate']}, tau {c['tau']}")
        out.append(
            {"rate": c["rate"], "tau": c["tau"], "var_cubic": c["var"], "se_cubic": c["var_se"]}
            | {"var_sigmoid": s[0]["var"], "se_sigmoid": s[0]["var_se"]}
        )
    return out


def cosine_cells(rows: list[dict], taus: list[float]) -> list[dict]:
    """Per (test function, cosine temperature): the exact gradient and the batch means of cubic and sigmoid."""
    out = []
    for function in sorted({r["function"] for r in rows}):
        for tau in taus:
            cell = {"function": function, "tau": tau}
            for method in ("eat_cubic", "eat_sigmoid"):
                (row,) = cells(rows, method, function=function, tau=tau)
                cell |= {"reference": row["reference"], method: row["batch_means"]}
            out.append(cell)
    return out


def _max_abs(values) -> float:
    return float(np.max(np.abs(np.asarray(list(values), dtype=float))))


def summarise(fidelity: dict, gradients: dict, runs: dict, baseline: dict, settings: dict) -> dict:
    grid = fidelity["grid"]
    compare_tau = settings["fidelity"]["compare_tau"]
    w1_at = {m: float(np.mean([r["w1"] for r in cells(grid, m, tau=compare_tau)])) for m in {r["method"] for r in grid}}
    cos = {}
    for row in gradients["rows"]:
        cos.setdefault(row["function"], {}).setdefault(row["method"], {})[str(row["tau"])] = row["cosine"]
    return {
        "fidelity": {
            "max_abs_z_mean_cubic_vs_rate": _max_abs(r["z_mean_vs_rate"] for r in cells(grid, "eat_cubic")),
            "max_abs_z_mean_sigmoid_vs_closed": _max_abs(r["z_mean_vs_closed"] for r in cells(grid, "eat_sigmoid")),
            "min_z_mean_sigmoid_vs_rate_at_tau": float(
                np.min([r["z_mean_vs_rate"] for r in cells(grid, "eat_sigmoid", tau=compare_tau)])
            ),
            "max_abs_z_var_vs_closed": _max_abs(
                r["z_var_vs_closed"] for m in ("eat_cubic", "eat_sigmoid") for r in cells(grid, m)
            ),
            "variance_bias": variance_bias(grid),
            "w1_mean_at_tau": w1_at,
            "negative_binomial_max_abs_z_mean_cubic": _max_abs(
                r["z_mean"] for r in fidelity["negative_binomial"] if r["method"] == "eat_cubic"
            ),
        },
        "gradients": {
            "cosine": cos,
            "cosine_cells": cosine_cells(gradients["rows"], settings["gradients"]["cosine_taus"]),
        },
        "vae": {m: vae_summary(run) for m, run in runs.items()},
        "poglm": {
            **{
                m: {
                    "corr_observed": float(np.mean([r["corr_observed"] for r in run["poglm"]])),
                    "corr_full": float(np.mean([r["corr_full"] for r in run["poglm"]])),
                    "exact_elbo": float(np.mean([r["exact_elbo"] for r in run["poglm"]])),
                    "coupling_sq_error": np.concatenate([r["coupling_sq_error"] for r in run["poglm"]]).tolist(),
                    "coupling_sq_error_at_init": np.concatenate(
                        [r["coupling_sq_error_at_init"] for r in run["poglm"]]
                    ).tolist(),
                }
                for m, run in runs.items()
            },
            "observed_only": {"corr_observed": baseline["corr_observed"]},
        },
    }


def main(job) -> None:
    metrics = summarise(
        read_json(job.input.fidelity),
        read_json(job.input.gradients),
        read_runs(list(job.input.runs)),
        read_json(job.input.baseline),
        job.params.settings,
    )
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "poisson-eat", claims)
