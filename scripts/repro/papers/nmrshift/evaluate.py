"""Stage ``nmrshift_evaluate``: metrics of every variant, the paper's claims at this scale.

L_atom: pooled over assigned atoms of the labelled test folds; L_mol: predictions and targets
sorted per molecule (labelled test) or against the observed multiset (held-out literature
spectra, the 'set-MAE'). Claims compare variants on the same folds; exact properties are
recomputed here on random sets, so a broken loss or metric fails its claim.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from repro.metrics.regression import mean_sd
from repro.papers.nmrshift.claims import CLAIMS, FULL_SCALE
from repro.papers.nmrshift.losses import optimal_matching_cost, sorted_matching_cost
from repro.papers.nmrshift.metrics import pooled, set_pairs
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import atomic_path, write_json

PAIR_COSTS = {"l1": np.abs, "l2": np.square, "huber": lambda d: np.where(d <= 1.0, 0.5 * d**2, d - 0.5)}


def matching_identity_gap(n_pairs: int, max_size: int, seed: int) -> dict[str, float]:
    """Largest |sorted cost - optimal assignment cost| over random set pairs, per convex pair cost."""
    rng = np.random.default_rng(seed)
    gaps = dict.fromkeys(PAIR_COSTS, 0.0)
    for _ in range(n_pairs):
        size = int(rng.integers(1, max_size + 1))
        pred, obs = rng.normal(0, 3, size), rng.normal(0, 3, size)
        for name, f in PAIR_COSTS.items():
            gaps[name] = max(gaps[name], abs(sorted_matching_cost(pred, obs, f) - optimal_matching_cost(pred, obs, f)))
    return gaps


def joined_pairs(predictions: pd.DataFrame, labelled: pd.DataFrame, unlabelled: pd.DataFrame) -> pd.DataFrame:
    """One row per evaluated atom: variant, nucleus, kind, fold, mol_id, solvent group, pred, true, and the sorted pair."""
    truth = {
        kind: {
            (r["mol_id"], r["nucleus"]): r
            for r in frame[["mol_id", "nucleus", "target", "target_mask", "observed"]].to_dict("records")
        }
        for kind, frame in (("labelled", labelled), ("unlabelled", unlabelled))
    }
    columns: dict[str, list] = {
        k: []
        for k in (
            "pred",
            "true",
            "sorted_pred",
            "sorted_obs",
            "trivial",
            "sorted_trivial",
            "variant",
            "nucleus",
            "kind",
            "fold",
            "mol_id",
            "solvent_group",
        )
    }
    for rec in predictions.itertuples(index=False):
        ref = truth[rec.kind][(rec.mol_id, rec.nucleus)]
        pred = np.asarray(rec.pred, float)
        true = (
            np.asarray(ref["target"], float)[np.asarray(ref["target_mask"])]
            if rec.kind == "labelled"
            else np.full(pred.size, np.nan)
        )
        sorted_pred, sorted_obs = set_pairs([pred], [np.asarray(ref["observed"], float)])
        trivial = np.full(pred.size, float(rec.train_mean))
        for name, values in (
            ("pred", pred),
            ("true", true),
            ("sorted_pred", sorted_pred),
            ("sorted_obs", sorted_obs),
            ("trivial", trivial),
            ("sorted_trivial", trivial),
        ):
            columns[name].append(values)
        for name in ("variant", "nucleus", "kind", "fold", "mol_id", "solvent_group"):
            columns[name].append(np.repeat(getattr(rec, name), pred.size))
    return pd.DataFrame({name: np.concatenate(parts) for name, parts in columns.items()})


def variant_metrics(pairs: pd.DataFrame) -> dict[str, Any]:
    """L_atom and L_mol (labelled test), set metric (literature test), per-fold and per-solvent breakdowns."""
    lab, unl = pairs[pairs.kind == "labelled"], pairs[pairs.kind == "unlabelled"]
    out: dict[str, Any] = {
        "folds": sorted(int(f) for f in pairs.fold.unique()),
        "L_atom": pooled(lab.pred, lab.true),
        "L_mol": pooled(lab.sorted_pred, lab.sorted_obs),
        "set_literature": pooled(unl.sorted_pred, unl.sorted_obs),
        "L_atom_fold_mae": mean_sd([pooled(g.pred, g.true)["mae"] for _, g in lab.groupby("fold")]),
        "per_solvent_set_mae": {s: pooled(g.sorted_pred, g.sorted_obs)["mae"] for s, g in unl.groupby("solvent_group")},
        "per_solvent_atom_mae": {s: pooled(g.pred, g.true)["mae"] for s, g in lab.groupby("solvent_group")},
    }
    per_mol = (
        lab.assign(err=(lab.pred - lab.true).abs(), set_err=(lab.sorted_pred - lab.sorted_obs).abs())
        .groupby(["fold", "mol_id"])[["err", "set_err"]]
        .agg(nan_sum)
    )
    out["max_Lmol_minus_Latom_per_molecule"] = float((per_mol.set_err - per_mol.err).max())
    return out


def _same_folds(pairs: pd.DataFrame, variants: list[str], nucleus: str) -> pd.DataFrame:
    sub = pairs[(pairs.nucleus == nucleus) & pairs.variant.isin(variants)]
    common = set.intersection(*(set(sub[sub.variant == v].fold) for v in variants))
    return sub[sub.fold.isin(common)]


def _mae(pairs: pd.DataFrame, variant: str, kind: str = "labelled", sorted_: bool = False) -> float:
    sel = pairs[(pairs.variant == variant) & (pairs.kind == kind)]
    if sel.empty:
        return float("nan")
    return pooled(sel.sorted_pred, sel.sorted_obs)["mae"] if sorted_ else pooled(sel.pred, sel.true)["mae"]


def nan_sum(values: pd.Series) -> float:
    """Sum that keeps a NaN (pandas' own sum skips it, so one NaN prediction would count as no error)."""
    return float(np.sum(values.to_numpy(dtype=float)))


def per_molecule(pairs: pd.DataFrame) -> dict[str, Any]:
    """Per test molecule (fold:mol_id) of one variant: summed |error| (atom and sorted set) of the model and of
    the trivial predictor (the fold's mean labelled training shift), atoms, solvent.

    What the claims' paired bootstraps resample: labelled test molecules and held-out literature spectra. A
    NaN prediction makes its molecule's sum NaN (and so the claims that use it), never a zero error. Labelled
    targets are the spectrum's assigned atoms only (unassigned shifts are missing, not zero: target_mask).
    """
    out: dict[str, Any] = {}
    frame = pairs.assign(
        err=(pairs.pred - pairs.true).abs(),
        set_err=(pairs.sorted_pred - pairs.sorted_obs).abs(),
        trivial_err=(pairs.trivial - pairs.true).abs(),
        trivial_set_err=(pairs.sorted_trivial - pairs.sorted_obs).abs(),
    )
    for kind, group in frame.groupby("kind"):
        columns = ["err", "set_err", "trivial_err", "trivial_set_err"]
        sums = group.groupby(["fold", "mol_id", "solvent_group"], sort=True)[columns].agg(nan_sum)
        sizes = group.groupby(["fold", "mol_id", "solvent_group"], sort=True).size()
        out[str(kind)] = {
            "key": [f"{fold}:{mol}" for fold, mol, _ in sums.index],
            "solvent": [str(s) for _, _, s in sums.index],
            **{c: sums[c].tolist() for c in columns},
            "atoms": sizes.astype(int).tolist(),
        }
    return out


def identities(settings: dict[str, Any], seed: int) -> dict[str, Any]:
    """The exact properties, recomputed here on random sets so a broken loss fails its check."""
    margins = settings["claims"]
    gaps = matching_identity_gap(margins["identity_pairs"], margins["identity_max_size"], seed)
    concave = sorted_matching_cost([0, 1], [0.9, 2], np.sqrt) - optimal_matching_cost([0, 1], [0.9, 2], np.sqrt)
    return {"gaps": gaps, "pairs": margins["identity_pairs"], "concave_gap": float(concave)}


def main(job) -> None:
    settings = job.params.settings
    predictions = pd.concat([pd.read_parquet(p) for p in job.input.predictions], ignore_index=True)
    pairs = joined_pairs(predictions, pd.read_parquet(job.input.labelled), pd.read_parquet(job.input.unlabelled))
    metrics: dict[str, Any] = {"variants": {}, "variants_by_nucleus": {}, "per_molecule": {}}
    for (nucleus, variant), group in pairs.groupby(["nucleus", "variant"]):
        metrics["variants"][f"{nucleus}/{variant}"] = variant_metrics(group)
        metrics["per_molecule"][f"{nucleus}/{variant}"] = per_molecule(group)
        metrics["variants_by_nucleus"].setdefault(nucleus, []).append(variant)
    curve = {}
    for nucleus in settings["nuclei"]:
        names = [v for v in settings["curve"] if v in metrics["variants_by_nucleus"].get(nucleus, [])]
        sub = _same_folds(pairs, names, nucleus) if names else pairs.iloc[:0]
        curve[nucleus] = [
            {
                "variant": v,
                "unlabelled_fraction": settings["variants"][v]["unlabelled_fraction"],
                "atom_mae": _mae(sub, v),
                "set_mae_literature": _mae(sub, v, kind="unlabelled", sorted_=True),
            }
            for v in names
        ]
    metrics["curve"] = curve
    metrics["identity"] = identities(settings, job.params.seed)
    reported = load_reported(job.input.reported)
    metrics["reported"] = {key: reported[key]["value"] for key in FULL_SCALE}
    write_json(job.output.metrics, metrics)
    write_claims(job.output.claims, "nmrshift", evaluate_claims(CLAIMS, metrics, job.params.scale, reported))
    with atomic_path(job.output.pairs) as tmp:
        pairs.to_parquet(tmp, index=False)
