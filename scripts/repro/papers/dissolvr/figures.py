"""Stage: parity plots, the TreeSHAP summary (beeswarm of the top features) and RMSE per split."""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.reporting.plotting import PALETTE, save, subplots
from repro.workflow.io import read_json

LABELS = {
    "dissolvr": "DISSOLVR-lite (GBM)",
    "gbm_rdkit": "GBM, RDKit only",
    "esol_refit": "ESOL refit",
    "esol_original": "ESOL (Delaney)",
    "rf_morgan": "RF on Morgan",
    "ridge_rdkit": "ridge, RDKit",
}
PARITY_MODELS = ("dissolvr", "gbm_rdkit", "esol_refit", "rf_morgan")
UNIT = "log10 mol/L"


def parity_figure(predictions: pd.DataFrame, metrics: dict, path: str) -> None:
    split = metrics["primary"]["split"]
    sel = predictions[predictions["split"] == split]
    lo, hi = float(sel["logS"].min()) - 0.5, float(sel["logS"].max()) + 0.5
    shown = [m for m in PARITY_MODELS if m in set(sel["model"])]
    fig, axes = subplots(1, len(shown), width=2.8, height=2.8)
    for ax, model in zip(axes[0], shown):
        mean = sel[sel["model"] == model].groupby("row").agg(logS=("logS", "first"), pred=("prediction", "mean"))
        ax.scatter(mean["logS"], mean["pred"], s=5, alpha=0.6)
        ax.plot([lo, hi], [lo, hi], color="k", lw=0.8, label="prediction = measurement")
        rmse = metrics["primary"]["rmse_of_seed_mean"][model]
        ax.set(
            xlim=(lo, hi), ylim=(lo, hi), xlabel=f"measured logS ({UNIT})", title=f"{LABELS[model]}\nRMSE {rmse:.2f}"
        )
    axes[0][0].set_ylabel(f"predicted logS ({UNIT}), {split} test split")
    axes[0][0].legend(loc="upper left")
    save(fig, path)


def shap_figure(shap: dict, path: str, top: int = 12) -> None:
    values, x, names = shap["values"], shap["x"], shap["features"]
    order = np.argsort(-np.abs(values).mean(axis=0))[:top][::-1]
    fig, axes = subplots(1, 1, width=5.0, height=0.3 * top + 1.0)
    ax = axes[0][0]
    rng = np.random.default_rng(0)
    for pos, j in enumerate(order):
        col = x[:, j]
        finite = np.isfinite(col)
        lo, hi = (np.nanpercentile(col, 5), np.nanpercentile(col, 95)) if finite.any() else (0.0, 1.0)
        colour = np.clip((np.where(finite, col, lo) - lo) / (hi - lo if hi > lo else 1.0), 0, 1)
        points = ax.scatter(values[:, j], pos + rng.uniform(-0.3, 0.3, len(col)), c=colour, cmap="coolwarm", s=4)
    fig.colorbar(points, ax=ax, label="feature value (5th to 95th percentile, scaled 0 to 1)")
    ax.set_yticks(range(len(order)), [str(names[j]) for j in order])
    ax.axvline(0, color="k", lw=0.6)
    ax.set(xlabel=f"TreeSHAP value (contribution to predicted logS, {UNIT})", title="DISSOLVR-lite attributions")
    save(fig, path)


def splits_figure(metrics: dict, path: str) -> None:
    scores = metrics["scores"]
    splits = [s for s in ("given", "random", "scaffold") if s in scores]
    models = [m for m in LABELS if any(m in scores[s] for s in splits)]
    fig, axes = subplots(1, 1, width=5.5, height=2.8)
    ax = axes[0][0]
    width = 0.8 / len(models)
    for k, model in enumerate(models):
        means = [np.mean(scores[s][model]["rmse"]) if model in scores[s] else np.nan for s in splits]
        sds = [np.std(scores[s][model]["rmse"], ddof=1) if model in scores[s] else np.nan for s in splits]
        ax.bar(np.arange(len(splits)) + k * width, means, width, yerr=sds, label=LABELS[model], color=PALETTE[k])
    ax.axhline(metrics["literature_noise_logS"], color="k", ls="--", lw=0.8, label="literature noise estimate")
    ax.set_xticks(np.arange(len(splits)) + 0.4 - width / 2, splits)
    ax.set(xlabel="train/test split", ylabel=f"test RMSE ({UNIT}), mean ± sd over seeds")
    ax.legend(ncol=2)
    save(fig, path)


def main(job) -> None:
    predictions = pd.read_parquet(job.input.predictions)
    metrics = read_json(job.input.metrics)
    with np.load(job.input.shap) as z:
        shap = {k: z[k] for k in z.files}
    parity_figure(predictions, metrics, job.output.parity)
    shap_figure(shap, job.output.shap_summary)
    splits_figure(metrics, job.output.splits)
