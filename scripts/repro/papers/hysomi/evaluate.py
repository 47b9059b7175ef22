"""Metrics and claims of HySoMi: per-state errors on held-out samples, parameter recovery,
equifinality across seeds, error against training-set size, and the exact properties of the model.

Errors are taken against the noise-free truth (synthetic data). States are compared through a
normalised RMSE (RMSE / sd of the state over test samples and times), because SOC (about 20 mg C/g)
would otherwise swamp DOC and ENZ (about 0.1 and 0.01 mg C/g).
"""

from __future__ import annotations

import logging

import numpy as np
import torch

from repro.metrics import regression as metrics
from repro.papers.hysomi.claims import CLAIMS
from repro.papers.hysomi.dataset import load_level, true_params
from repro.papers.hysomi.runs import METHODS, load_runs
from repro.papers.hysomi.soil_model import PARAMS, STATES, Bounds, simulate
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import write_json

log = logging.getLogger(__name__)


def state_errors(traj: np.ndarray, truth: np.ndarray) -> dict[str, dict[str, float]]:
    """Per state: RMSE, normalised RMSE and NSE of (N, T, 5) predictions against the truth."""
    out = {}
    for i, s in enumerate(STATES):
        pred, true = traj[..., i], truth[..., i]
        if np.isnan(pred).all():
            out[s] = {"rmse": None, "nrmse": None, "nse": None}
            continue
        rmse = metrics.rmse(pred, true)
        out[s] = {"rmse": rmse, "nrmse": rmse / float(true.std()), "nse": metrics.nse(pred, true)}
    return out


def group_error(errors: dict[str, dict], states: list[str]) -> float | None:
    """Mean normalised RMSE over a group of states (None if a state has no prediction)."""
    values = [errors[s]["nrmse"] for s in states]
    return None if any(v is None for v in values) else float(np.mean(values))


def per_sample_error(traj: np.ndarray, truth: np.ndarray, states: list[str]) -> np.ndarray:
    """Per test sample: mean over ``states`` and times of the squared error in units of each state's sd over the
    test samples and times, (N,); the items of the learning checks."""
    idx = [STATES.index(s) for s in states]
    sd = truth[..., idx].reshape(-1, len(idx)).std(0)
    return np.mean(((traj[..., idx] - truth[..., idx]) / sd) ** 2, axis=(-1, -2))


def midpoint_trajectories(test, data, bounds: Bounds, dt: float) -> np.ndarray:
    """The test samples simulated with every parameter at the midpoint of its bounds (unit scale 0.5): where every
    parametric model starts before training (sigmoid(0) with a small last layer), the trivial predictor."""
    with torch.no_grad():
        theta = bounds.from_unit(torch.full((len(test.ids), len(PARAMS)), 0.5, dtype=torch.float64))
        return simulate(test.x0, theta, data.times, dt, bounds.f_s).numpy()


def conservation_drift(traj: np.ndarray) -> float:
    """Largest relative change of total carbon along any trajectory (closed system: 0 up to round-off)."""
    total = traj.sum(-1)
    return float(np.max(np.abs(total - total[..., :1]) / np.abs(total[..., :1])))


def evaluate_level(level: str, runs: dict, job, settings: dict, bounds: Bounds) -> dict:
    data = load_level(job.input.traits, job.input.observations, level)
    test = data.splits["test"]
    truth = test.truth.numpy()
    theta_true = true_params(job.input.params_true, test.ids)
    observed = data.observed_states
    unobserved = [s for s in STATES if s not in observed]
    main_n = settings["main_n_train"]
    out: dict = {
        "n_train": sorted(settings["n_train"]),
        "main_n_train": main_n,
        "observed_states": observed,
        "unobserved_states": unobserved,
        "methods": {},
    }

    with torch.no_grad():
        oracle = simulate(test.x0, torch.tensor(theta_true), data.times, settings["dt"], bounds.f_s).numpy()
    oracle_err = state_errors(oracle, truth)
    out["oracle"] = {
        "states": oracle_err,
        "observed": group_error(oracle_err, observed),
        "unobserved": group_error(oracle_err, unobserved),
    }
    out["trivial"] = {
        "observed_per_sample": per_sample_error(
            midpoint_trajectories(test, data, bounds, settings["dt"]), truth, observed
        ).tolist()
    }

    for method in [m for m in METHODS if (level, m) in runs]:
        run = runs[(level, method)]
        n_train, seeds = run["n_train"], run["seed"]
        per_n = {}
        for n in sorted(set(n_train.tolist())):
            members = np.flatnonzero(n_train == n)
            errs = [state_errors(run["traj"][m], truth) for m in members]
            obs = [group_error(e, observed) for e in errs]
            unobs = [group_error(e, unobserved) for e in errs]
            per_n[str(n)] = {
                "observed": metrics.mean_sd(obs),
                "unobserved": None if None in unobs else metrics.mean_sd(unobs),
                "observed_per_seed": obs,
                "unobserved_per_seed": unobs,
                "seeds": seeds[members].tolist(),
            }
        main = np.flatnonzero(n_train == main_n)
        result = {"by_n_train": per_n, "states": state_errors(np.nanmean(run["traj"][main], axis=0), truth)}
        result["observed_per_sample_per_member"] = [
            per_sample_error(run["traj"][m], truth, observed).tolist() for m in main
        ]
        theta = run["theta"][main]  # (seeds, N, 8)
        if not np.isnan(theta).all():
            mean_theta = theta.mean(0)
            result["parameter_recovery"] = {
                p: {
                    "median_rel_error": float(
                        np.median(np.abs(mean_theta[:, i] - theta_true[:, i]) / theta_true[:, i])
                    ),
                    "spearman": metrics.spearman(mean_theta[:, i], theta_true[:, i]),
                }
                for i, p in enumerate(PARAMS)
            }
            cv = theta.std(0, ddof=1) / theta.mean(0)
            result["equifinality_cv"] = {p: float(cv[:, i].mean()) for i, p in enumerate(PARAMS)}
            result["equifinality_cv_mean"] = float(cv.mean())
            result["equifinality_cv_per_sample"] = cv.mean(1).tolist()
            lo, hi = bounds.lo.numpy(), bounds.hi.numpy()
            result["bound_margin"] = float(np.min(np.minimum(theta - lo, hi - theta) / (hi - lo)))
            result["conservation_drift"] = conservation_drift(run["traj"])
            result["min_state"] = float(np.min(run["traj"]))
        result["best_epoch"] = np.asarray(run["best_epoch"]).tolist()
        result["train_seconds"] = float(run["train_seconds"])
        out["methods"][method] = result
    return out


def main(job) -> None:
    settings = job.params.settings
    bounds = Bounds.from_yaml(job.input.constraints)
    runs = load_runs(list(job.input.runs))
    results = {level: evaluate_level(level, runs, job, settings, bounds) for level in settings["complexity"]}
    metrics = {"paper": "hysomi", "main_n_train": settings["main_n_train"], "levels": results}
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "hysomi", claims)
