"""Stage: RMSE/MAE/R^2 per split, model and seed; the inputs of the claims; metrics.json and claims.json."""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.metrics.regression import mae, r2, rmse
from repro.papers.dissolvr.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_json, write_json

REQUIRED = {"split", "seed", "model", "row", "logS", "prediction"}


def scores(predictions: pd.DataFrame) -> dict:
    """{split: {model: {rmse: [per seed], mae: [...], r2: [...], seeds: [...]}}}."""
    out: dict = {}
    for (split, model), group in predictions.groupby(["split", "model"], sort=True):
        per_seed = [g for _, g in group.groupby("seed", sort=True)]
        out.setdefault(split, {})[model] = {
            "seeds": [int(g["seed"].iloc[0]) for g in per_seed],
            "rmse": [rmse(g["prediction"], g["logS"]) for g in per_seed],
            "mae": [mae(g["prediction"], g["logS"]) for g in per_seed],
            "r2": [r2(g["prediction"], g["logS"]) for g in per_seed],
        }
    return out


def seed_mean_squared_errors(predictions: pd.DataFrame, split: str) -> dict[str, list[float]]:
    """Per test molecule, the squared error of the seed-averaged prediction, models aligned by row."""
    sel = predictions[predictions["split"] == split]
    mean = sel.groupby(["model", "row"], sort=True).agg(logS=("logS", "first"), prediction=("prediction", "mean"))
    out = {}
    for model, group in mean.groupby(level="model"):
        out[str(model)] = ((group["prediction"] - group["logS"]) ** 2).to_numpy().tolist()
    rows = {m: len(v) for m, v in out.items()}
    if len(set(rows.values())) != 1:
        raise InputError("predictions", f"split {split!r}: models predict different test rows {rows}")
    return out


def relative_increase(table: dict, model: str, base: str = "random", shifted: str = "scaffold") -> list[float]:
    """Per seed, RMSE under the shifted split / RMSE under the base split - 1 (seeds paired)."""
    a, b = table[shifted][model], table[base][model]
    if a["seeds"] != b["seeds"]:
        raise InputError("predictions", f"{model}: seeds differ between {base} and {shifted}")
    return (np.asarray(a["rmse"]) / np.asarray(b["rmse"]) - 1.0).tolist()


def main(job) -> None:
    settings = job.params.settings
    predictions = pd.read_parquet(job.input.predictions)
    missing = REQUIRED - set(predictions.columns)
    if missing:
        raise InputError(job.input.predictions, f"missing columns {sorted(missing)}")
    with np.load(job.input.shap) as z:
        additivity = np.abs(z["values"].sum(axis=1) + z["expected"] - z["prediction"])
        top = np.argsort(-np.abs(z["values"]).mean(axis=0))[:10]
        top_features = [[str(z["features"][i]), float(np.abs(z["values"][:, i]).mean())] for i in top]
    table = scores(predictions)
    primary = settings["primary_split"]
    sq = seed_mean_squared_errors(predictions, primary)
    featurise, fit = read_json(job.input.featurise_timing), read_json(job.input.fit_timing)
    metrics = {
        "scores": table,
        "mean_rmse": {s: {m: float(np.mean(v["rmse"])) for m, v in ms.items()} for s, ms in table.items()},
        "primary": {
            "split": primary,
            "squared_errors": sq,
            "rmse_of_seed_mean": {m: float(np.sqrt(np.mean(v))) for m, v in sq.items()},
        },  # fmt: skip
        "relative_increase": {
            m: relative_increase(table, m)
            for m in ("dissolvr", "rf_morgan", "esol_refit")
            if m in table.get("scaffold", {}) and m in table.get("random", {})
        },  # fmt: skip
        "shap_additivity_max_error": float(np.max(additivity)),
        "shap_top_features": top_features,
        "literature_noise_logS": settings["literature_noise_logS"],
        "runtime_seconds_per_1000": {
            "featurise": featurise["descriptor_seconds_per_1000"],
            "predict": fit["predict_seconds_per_1000"]["dissolvr"],
            "total": featurise["descriptor_seconds_per_1000"] + fit["predict_seconds_per_1000"]["dissolvr"],
        },
        "bootstrap_resamples": settings["bootstrap_resamples"],
    }
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "dissolvr", claims)
