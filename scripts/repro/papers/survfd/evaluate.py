"""Stage: interaction indices from the games, the checks against closed forms, metrics.json and claims.json."""

from __future__ import annotations

import numpy as np

from repro.papers.survfd.claims import CLAIMS
from repro.papers.survfd.interactions import (
    interaction_share,
    k_sii,
    local_accuracy_error,
    mask_of,
    moebius,
    time_dependent_share,
)
from repro.papers.survfd.simulate import scenario_from
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_npz, write_json

TARGETS = ("hazard", "log_hazard", "survival")
PAIR = mask_of(0, 1)


def relative_range(curves: np.ndarray) -> float:
    """Mean over points of (max_t - min_t) / max_t |phi|; points with a zero curve count as constant."""
    scale = np.max(np.abs(curves), axis=1)
    spread = np.ptp(curves, axis=1)
    return float(np.mean(np.divide(spread, scale, out=np.zeros_like(spread), where=scale > 0)))


def correlations(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Pearson r over t per point; a flat estimated curve (no interaction found) counts as r = 0."""
    e = estimate - estimate.mean(axis=1, keepdims=True)
    t = truth - truth.mean(axis=1, keepdims=True)
    norm = np.sqrt(np.sum(e**2, axis=1) * np.sum(t**2, axis=1))
    return np.divide(np.sum(e * t, axis=1), norm, out=np.zeros_like(norm), where=norm > 0)


def closed_form_errors(sc, x: np.ndarray, bg: np.ndarray, grid: np.ndarray, phi: dict) -> tuple[float, float]:
    cov = np.mean(bg[:, 0] * bg[:, 1]) - bg[:, 0].mean() * bg[:, 1].mean()
    pair = sc.gamma * ((x[:, 0] - bg[:, 0].mean()) * (x[:, 1] - bg[:, 1].mean()) + cov)
    main = (sc.beta[2] + sc.delta * np.log(grid))[None] * (x[:, 2:3] - bg[:, 2].mean())
    return float(np.max(np.abs(phi[PAIR] - pair[:, None]))), float(np.max(np.abs(phi[mask_of(2)] - main)))


def simulated_metrics(games: dict, settings: dict) -> dict:
    order = settings["explain"]["order"]
    accuracy = {t: 0.0 for t in TARGETS}
    fitted_accuracy: dict[str, float] = {}
    pair_err = main_err = 0.0
    variation = {"survival": [], "log_hazard": []}
    share = {"survival": [], "log_hazard": []}
    models = settings["fitted"]["models"]
    corr: dict[str, list[float]] = {m: [] for m in models}
    shuffled: dict[str, list[float]] = {m: [] for m in models}
    fitted_variation: dict[str, list[float]] = {m: [] for m in models}
    fitted_share: dict[str, dict[str, list[float]]] = {m: {} for m in models}
    learning: dict[str, list[np.ndarray]] = {m: [] for m in (*models, "trivial")}
    curves = {}
    time_dependent: dict[str, dict[str, float]] = {}
    for cfg in settings["scenarios"]:
        sc = scenario_from(cfg)
        for seed in settings["seeds"]:
            key = f"{sc.name}__s{seed}"
            x, bg, grid = (games[f"{key}__{k}"] for k in ("x", "background", "grid"))
            phi = {}
            for target in TARGETS:
                nu = games[f"gt__{key}__{target}"]
                m = moebius(nu)
                phi[target] = k_sii(m, order)
                accuracy[target] = max(accuracy[target], local_accuracy_error(phi[target], nu))
                if seed == settings["seeds"][0]:
                    time_dependent.setdefault(sc.name, {})[target] = time_dependent_share(m)
                if target in share and sc.name == "additive":
                    share[target].append(float(np.mean(interaction_share(m))))
            errs = closed_form_errors(sc, x, bg, grid, phi["log_hazard"])
            pair_err, main_err = max(pair_err, errs[0]), max(main_err, errs[1])
            if sc.name == "interaction":
                for target in variation:
                    variation[target].append(relative_range(phi[target][PAIR]))
            if sc.name in settings["fitted"]["scenarios"]:
                truth = phi["survival"][PAIR]
                oracle = games[f"learn__truth__{key}"]
                learning["trivial"].append(games[f"learn__km__{key}"] - oracle)
                for name in models:
                    nu = games[f"fit__{name}__{key}"]
                    m_fit = moebius(nu)
                    est = k_sii(m_fit, order)
                    fitted_accuracy[f"{name}/{key}"] = local_accuracy_error(est, nu)
                    fitted_share[name].setdefault(sc.name, []).append(float(np.mean(interaction_share(m_fit))))
                    learning[name].append(games[f"learn__{name}__{key}"] - oracle)
                    if sc.name != "interaction":
                        continue
                    corr[name].append(float(np.mean(correlations(est[PAIR], truth))))
                    shuffled[name].append(float(np.mean(correlations(est[PAIR], np.roll(truth, 1, axis=0)))))
                    fitted_variation[name].append(relative_range(est[PAIR]))
                    if seed == settings["seeds"][0]:
                        curves[name] = est[PAIR][:4].tolist()
                if seed == settings["seeds"][0] and sc.name == "interaction":
                    curves |= {"truth": truth[:4].tolist(), "grid": grid.tolist()}
            if seed == settings["seeds"][0]:
                curves[f"scenario/{sc.name}"] = {
                    "grid": grid.tolist(),
                    **{t: {str(s): v[0].tolist() for s, v in phi[t].items()} for t in TARGETS},
                }
    return {
        "local_accuracy": {"ground_truth": accuracy, "fitted": fitted_accuracy},
        "closed_form": {"interaction_max_error": pair_err, "main_effect_max_error": main_err},
        "time_variation": variation,
        "interaction_share": share,
        "time_dependent_interaction_share": time_dependent,
        "curve_correlation": corr,
        "curve_correlation_shuffled_pairing": shuffled,
        "fitted_time_variation": fitted_variation,
        "fitted_interaction_share": fitted_share,
        "learning": {k: np.concatenate(v).tolist() if v else [] for k, v in learning.items()},
        "curves": curves,
    }


def real_metrics(games: dict, settings: dict, fitted_accuracy: dict) -> dict:
    """Mean |phi_S(x, t)| over explained patients, full-data fit and min/max over bootstrap refits."""
    out = {}
    for name in settings["real"]["datasets"]:
        names = games[f"real__{name}__names"][games[f"real__{name}__features"]]
        entry = {"grid": games[f"real__{name}__grid"].tolist(), "features": names.tolist(), "models": {}}
        for model in settings["real"]["models"]:
            stacked = games[f"real__{name}__{model}"]
            per_boot = []
            for b, nu in enumerate(stacked):
                phi = k_sii(moebius(nu), settings["explain"]["order"])
                fitted_accuracy[f"{model}/{name}/b{b}"] = local_accuracy_error(phi, nu)
                per_boot.append({s: np.mean(np.abs(v), axis=0) for s, v in phi.items()})
            terms = {}
            for s in per_boot[0]:
                label = " x ".join(str(names[j]) for j in range(len(names)) if s >> j & 1)
                band = np.stack([p[s] for p in per_boot])
                terms[label] = {"mean": band[0].tolist(), "low": band.min(0).tolist(), "high": band.max(0).tolist()}
            entry["models"][model] = terms
        out[name] = entry
    return out


def main(job) -> None:
    settings = job.params.settings
    games = read_npz(job.input.games)
    metrics = simulated_metrics(games, settings)
    metrics["real"] = real_metrics(games, settings, metrics["local_accuracy"]["fitted"])
    write_json(job.output.metrics, metrics)
    write_claims(
        job.output.claims,
        "survfd",
        evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported)),
    )
