"""Stage ``nmrshift_figures``: MAE against unlabelled data, predicted against true, per-solvent errors and shift changes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.reporting.plotting import save, subplots
from repro.workflow.io import read_json


def mae_vs_unlabelled(metrics: dict, path: str) -> None:
    curve = metrics["curve"]
    fig, axes = subplots(1, len(curve), width=3.0)
    for ax, (nucleus, points) in zip(axes[0], curve.items()):
        points = sorted(points, key=lambda p: p["unlabelled_fraction"])
        x = [p["unlabelled_fraction"] for p in points]
        ax.plot(x, [p["atom_mae"] for p in points], "o-", label="atom MAE (labelled test)")
        ax.plot(x, [p["set_mae_literature"] for p in points], "s--", label="set MAE (held-out literature)")
        paper = metrics.get("reported", {}).get(f"semi_Latom_mae_{nucleus}")
        if paper is not None:
            ax.axhline(paper, color="k", ls=":", lw=0.8, label=f"paper, semi atom MAE {paper:g} (real data)")
        ax.set(xlabel="fraction of unlabelled training spectra", ylabel="MAE (ppm)", title=nucleus)
        ax.legend()
    save(fig, path)


def predicted_vs_true(pairs: pd.DataFrame, path: str) -> None:
    lab = pairs[pairs.kind == "labelled"]
    nuclei = sorted(lab.nucleus.unique())
    fig, axes = subplots(1, len(nuclei), width=3.0, height=3.0)
    for ax, nucleus in zip(axes[0], nuclei):
        for variant, marker in (("supervised", "x"), ("semi", ".")):
            sel = lab[(lab.nucleus == nucleus) & (lab.variant == variant)]
            ax.scatter(
                sel.true,
                sel.pred,
                s=6,
                marker=marker,
                alpha=0.6,
                label=f"{variant} (MAE {np.mean(np.abs(sel.pred - sel.true)):.3g})",
            )
        lims = [lab[lab.nucleus == nucleus].true.min(), lab[lab.nucleus == nucleus].true.max()]
        ax.plot(lims, lims, "k-", lw=0.8)
        ax.set(xlabel="true shift (ppm, synthetic)", ylabel="predicted (ppm)", title=nucleus)
        ax.legend()
    save(fig, path)


def per_solvent(metrics: dict, path: str) -> None:
    entries = [
        (key.split("/")[0], key.split("/")[1], m["per_solvent_set_mae"])
        for key, m in metrics["variants"].items()
        if key.split("/")[1] in ("semi", "semi_nosolvent")
    ]
    nuclei = sorted({e[0] for e in entries})
    fig, axes = subplots(1, len(nuclei), width=3.8)
    for ax, nucleus in zip(axes[0], nuclei):
        groups = ["CDCl3", "DMSO-d6", "other"]
        for k, (_, variant, values) in enumerate(e for e in entries if e[0] == nucleus):
            ax.bar(
                np.arange(3) + 0.38 * k,
                [values.get(g, np.nan) for g in groups],
                width=0.38,
                label="with solvent embedding" if variant == "semi" else "no solvent",
            )
        ax.set_xticks(np.arange(3) + 0.19, groups)
        ax.set(ylabel="set MAE, held-out literature (ppm)", title=nucleus)
        ax.legend()
    save(fig, path)


def solvent_shift_changes(predictions: pd.DataFrame, path: str) -> None:
    """Predicted shift change when only the solvent id changes (DMSO-d6 or other minus CDCl3), per atom."""
    sel = predictions[(predictions.variant == "semi") & (predictions.kind == "labelled")]
    nuclei = sorted(sel.nucleus.unique())
    fig, axes = subplots(1, len(nuclei), width=3.4)
    for ax, nucleus in zip(axes[0], nuclei):
        rows = sel[sel.nucleus == nucleus]
        base = np.concatenate(list(rows["pred_as_CDCl3"]))
        for group in ("DMSO-d6", "other"):
            ax.hist(np.concatenate(list(rows[f"pred_as_{group}"])) - base, bins=40, alpha=0.6, label=f"{group} - CDCl3")
        ax.set(xlabel="predicted shift change (ppm)", ylabel="atoms", title=f"{nucleus}, semi-supervised model")
        ax.legend()
    save(fig, path)


def main(job) -> None:
    metrics = read_json(job.input.metrics)
    pairs = pd.read_parquet(job.input.pairs)
    mae_vs_unlabelled(metrics, job.output.mae_vs_unlabelled)
    predicted_vs_true(pairs, job.output.predicted_vs_true)
    per_solvent(metrics, job.output.per_solvent)
    solvent_shift_changes(
        pd.concat([pd.read_parquet(p) for p in job.input.predictions], ignore_index=True),
        job.output.solvent_shift_changes,
    )
