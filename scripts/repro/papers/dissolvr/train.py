"""Stage: fit DISSOLVR-lite and the baselines on every split and seed; predictions, TreeSHAP, timings.

Every split also gets ``train_mean`` (the training rows' mean logS), the trivial predictor of the learning
checks. Splits: ``given`` (the source's own train/test split: the Huuskonen one in the embedded default),
``random`` and ``scaffold`` (80/20 over all rows, drawn per seed). Each split lists the models it fits
(config ``splits`` and ``models``). Outputs ``predictions.parquet`` (split, seed, model, row, logS, prediction),
``shap.npz`` (DISSOLVR's TreeSHAP values on the first split's test rows, first seed) and ``timing.json``.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from repro.papers.dissolvr import models
from repro.papers.dissolvr.features import ESOL
from repro.workflow.io import InputError, atomic_path, write_json
from repro.workflow.progress import Progress

TRIVIAL = "train_mean"
"""The trivial regressor the learning checks compare with: the mean logS of the training rows."""
PHYSICAL_BLOCKS = ("rdkit:", "surface:", "joback:", "abraham:", "solvent_", "state:")


def load(job) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    table = pd.read_parquet(job.input.table)
    features = pd.read_parquet(job.input.features)
    with np.load(job.input.morgan) as z:
        bits = np.unpackbits(z["bits"], axis=1)[:, : int(z["n_bits"])]
    if len(features) != len(table) or len(bits) != len(table):
        raise InputError(
            job.input.features, f"{len(features)} feature rows, {len(bits)} fingerprints, table {len(table)}"
        )
    return table, features, bits


def test_mask(name: str, table: pd.DataFrame, cfg: dict, seed: int) -> np.ndarray:
    if name == "given":
        if not set(table["split"]) >= {"train", "test"}:
            raise InputError("table", "split 'given' needs a source with its own train/test split")
        return table["split"].to_numpy() == "test"
    if name == "random":
        return models.random_split(len(table), cfg["test_fraction"], seed)
    if name == "scaffold":
        return models.scaffold_split(list(table["solute_smiles"]), cfg["test_fraction"], seed)
    raise ValueError(f"unknown split {name!r}")


def columns(features: pd.DataFrame, prefixes: tuple[str, ...]) -> list[str]:
    """Feature columns of the given blocks that vary across rows (constant ones carry no information)."""
    keep = [c for c in features.columns if c.startswith(prefixes)]
    return [c for c in keep if features[c].nunique(dropna=False) > 1]


def fit_predict(model: str, train: np.ndarray, test: np.ndarray, data: dict, settings: dict, seed: int, threads: int):
    """Predictions of one model on the test rows (and the fitted model for DISSOLVR)."""
    y = data["y"][train]
    if model == "train_mean":
        return np.full(int(test.sum()), y.mean()), None
    if model in ("dissolvr", "gbm_rdkit"):
        x = data["physical" if model == "dissolvr" else "rdkit"]
        fitted = models.fit_gbm(x[train], y, settings["gbm"], seed, threads)
        return fitted.predict(x[test]), fitted
    if model == "esol_refit":
        coef = models.fit_linear(data["esol"][train], y)
        return models.predict_linear(coef, data["esol"][test]), coef
    if model == "esol_original":
        return models.predict_linear(models.ESOL_ORIGINAL, data["esol"][test]), models.ESOL_ORIGINAL
    if model == "rf_morgan":
        fitted = models.fit_rf(data["bits"][train], y, settings["rf"], seed, threads)
        return fitted.predict(data["bits"][test]), fitted
    if model == "ridge_rdkit":
        fitted = models.fit_ridge(data["rdkit"][train], y, settings["ridge_alpha"])
        return fitted.predict(data["rdkit"][test]), fitted
    raise ValueError(f"unknown model {model!r}")


def main(job) -> None:
    settings = job.params.settings
    table, features, bits = load(job)
    physical = columns(features, PHYSICAL_BLOCKS)
    data = {
        "y": table["logS"].to_numpy(float),
        "physical": features[physical].to_numpy(float),
        "rdkit": features[columns(features, ("rdkit:",))].to_numpy(float),
        "esol": features[[f"esol:{k}" for k in ESOL]].to_numpy(float),
        "bits": bits,
    }
    seeds = [int(job.params.seed) + s for s in range(settings["n_seeds"])]
    rows, timing, shap_out = [], {"fit_seconds": {}, "predict_seconds_per_1000": {}}, None
    total = sum(len(settings["models"][s]) + 1 for s in settings["splits"]) * len(seeds)
    progress = Progress("dissolvr fits", total=total)
    for split in settings["splits"]:
        split_models = [*settings["models"][split], TRIVIAL]
        for seed in seeds:
            test = test_mask(split, table, settings, seed)
            train = ~test
            for model in split_models:
                start = time.perf_counter()
                pred, fitted = fit_predict(model, train, test, data, settings, seed, job.threads)
                timing["fit_seconds"].setdefault(model, []).append(time.perf_counter() - start)
                idx = np.flatnonzero(test)
                rows.append(pd.DataFrame({"split": split, "seed": seed, "model": model, "row": idx,
                                          "logS": data["y"][idx], "prediction": pred}))  # fmt: skip
                if model == "dissolvr" and shap_out is None:
                    start = time.perf_counter()
                    fitted.predict(data["physical"][test])
                    timing["predict_seconds_per_1000"]["dissolvr"] = 1000 * (time.perf_counter() - start) / test.sum()
                    values, expected = models.tree_shap(fitted, data["physical"][test])
                    shap_out = {"values": values, "expected": expected, "prediction": pred, "row": idx,
                                "x": data["physical"][test], "features": np.array(physical)}  # fmt: skip
                progress.update()
    with atomic_path(job.output.predictions) as tmp:
        pd.concat(rows, ignore_index=True).to_parquet(tmp, index=False)
    with atomic_path(job.output.shap) as tmp:
        np.savez_compressed(tmp, **shap_out)
    write_json(job.output.timing, timing)
