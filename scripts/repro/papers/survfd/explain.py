"""Stage: the SurvSHAP-IQ coalition games nu_t(S) of every explained function (the model calls; the
interaction algebra runs in evaluate).

Writes games.npz with, for each scenario and seed, the explained points, background and time grid and the
games of the ground-truth hazard, log-hazard and survival functions (``gt__...``), the survival games of
the scikit-survival models fitted to that cohort (``fit__...``), and for each real cohort the games of the
model fitted on the full data and on bootstrap resamples over its top-k features (``real__...``).
"""

from __future__ import annotations

import numpy as np

from repro.papers.survfd.interactions import game
from repro.papers.survfd.models import fit, survival_on_grid, time_grid
from repro.papers.survfd.simulate import scenario_from
from repro.workflow.io import atomic_path, read_npz
from repro.workflow.progress import Progress

TARGETS = ("hazard", "log_hazard", "survival")


def split(cohort: dict, n_background: int, n_explain: int) -> tuple[np.ndarray, np.ndarray]:
    if cohort["x"].shape[0] < n_background + n_explain:
        raise ValueError("cohort smaller than background + explained points")
    return cohort["x"][:n_background], cohort["x"][n_background : n_background + n_explain]


def simulated_games(cohorts: dict, settings: dict, out: dict, progress: Progress) -> None:
    exp, sim = settings["explain"], settings["simulation"]
    h0 = sim["baseline_hazard"]
    fitted = settings["fitted"]
    for cfg in settings["scenarios"]:
        sc = scenario_from(cfg)
        for seed in settings["seeds"]:
            key = f"{sc.name}__s{seed}"
            cohort = {k: cohorts[f"{key}__{k}"] for k in ("x", "time", "event")}
            background, x = split(cohort, exp["background"], exp["points"])
            grid = time_grid(cohort["time"], cohort["event"], tuple(exp["quantiles"]), exp["times"])
            out |= {f"{key}__x": x, f"{key}__background": background, f"{key}__grid": grid}
            for target in TARGETS:
                out[f"gt__{key}__{target}"] = game(
                    lambda rows, target=target: getattr(sc, target)(rows, grid, h0), x, background
                )
            if sc.name in fitted["scenarios"]:
                test = {k: cohorts[f"{key}__test__{k}"] for k in ("x", "time")}
                truth = sc.survival(test["x"], grid, h0)
                out[f"learn__truth__{key}"] = brier(truth, test["time"], grid)
                out[f"learn__km__{key}"] = brier(kaplan_meier(cohort, grid)[None], test["time"], grid)
                for name in fitted["models"]:
                    model = fit(name, settings["models"][name], int(seed), cohort["x"], cohort["time"], cohort["event"])
                    out[f"fit__{name}__{key}"] = game(
                        lambda rows, m=model: survival_on_grid(m, rows, grid), x, background
                    )
                    out[f"learn__{name}__{key}"] = brier(survival_on_grid(model, test["x"], grid), test["time"], grid)
            progress.update(scenario=sc.name, seed=int(seed))


def brier(survival: np.ndarray, event_time: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Per held-out subject (uncensored, so no censoring weights): the Brier score of a survival curve averaged
    over the grid, mean_t (1{T > t} - S(t | x))^2; ``survival`` (subjects or 1, times)."""
    alive = (event_time[:, None] > grid[None]).astype(float)
    return np.mean((alive - survival) ** 2, axis=1)


def kaplan_meier(cohort: dict, grid: np.ndarray) -> np.ndarray:
    """The training cohort's Kaplan-Meier survival on the grid: the trivial predictor (no covariates)."""
    from sksurv.nonparametric import kaplan_meier_estimator

    times, surv = kaplan_meier_estimator(cohort["event"], cohort["time"])
    idx = np.searchsorted(times, grid, side="right") - 1
    return np.where(idx < 0, 1.0, surv[np.clip(idx, 0, None)])


def top_features(x: np.ndarray, time: np.ndarray, event: np.ndarray, k: int, cfg: dict) -> np.ndarray:
    """The k features with the largest standardised Cox coefficient (a cheap importance ranking)."""
    scale = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    cox = fit("coxph", cfg, 0, (x - x.mean(axis=0)) / scale, time, event)
    return np.sort(np.argsort(-np.abs(cox.coef_))[:k])


def real_games(cohorts: dict, settings: dict, out: dict, progress: Progress) -> None:
    real, exp = settings["real"], settings["explain"]
    for name in real["datasets"]:
        x, time, event = (cohorts[f"{name}__{k}"] for k in ("x", "time", "event"))
        chosen = top_features(x, time, event, real["top_k"], settings["models"]["coxph"])
        rng = np.random.default_rng([int(settings["data_seed"]), 17])
        order = rng.permutation(x.shape[0])
        background, points = (
            x[order[: exp["background"]]],
            x[order[exp["background"] : exp["background"] + real["points"]]],
        )
        grid = time_grid(time, event, tuple(real["quantiles"]), exp["times"])
        out |= {
            f"real__{name}__grid": grid,
            f"real__{name}__features": chosen,
            f"real__{name}__names": cohorts[f"{name}__features"],
        }
        for model_name in real["models"]:
            games = []
            for b in range(real["bootstrap"] + 1):
                rows = np.arange(x.shape[0]) if b == 0 else rng.integers(0, x.shape[0], x.shape[0])
                model = fit(model_name, settings["models"][model_name], b, x[rows], time[rows], event[rows])
                games.append(game(lambda r, m=model: survival_on_grid(m, r, grid), points, background, chosen))
                progress.update(dataset=name, model=model_name, bootstrap=b)
            out[f"real__{name}__{model_name}"] = np.stack(games)


def main(job) -> None:
    settings = job.params.settings
    cohorts = read_npz(job.input.simulated) | read_npz(job.input.real)
    out: dict[str, np.ndarray] = {}
    progress = Progress("survfd games")
    simulated_games(cohorts, settings, out, progress)
    real_games(cohorts, settings, out, progress)
    with atomic_path(job.output.games) as tmp:
        np.savez(tmp, **out)
