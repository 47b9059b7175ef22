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

from repro.claims import Claim, Test, write_claims
from repro.io import atomic_path, write_json
from repro.metrics import mean_sd
from repro.papers.nmrshift.losses import optimal_matching_cost, sorted_matching_cost
from repro.papers.nmrshift.metrics import pooled, set_pairs
from repro.registry import load_reported

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
        for name, values in (("pred", pred), ("true", true), ("sorted_pred", sorted_pred), ("sorted_obs", sorted_obs)):
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
        .sum()
    )
    out["max_Lmol_minus_Latom_per_molecule"] = float((per_mol.set_err - per_mol.err).max())
    return out


def _same_folds(pairs: pd.DataFrame, variants: list[str], nucleus: str) -> pd.DataFrame:
    sub = pairs[(pairs.nucleus == nucleus) & pairs.variant.isin(variants)]
    common = set.intersection(*(set(sub[sub.variant == v].fold) for v in variants))
    return sub[sub.fold.isin(common)]


def _mae(
    pairs: pd.DataFrame, variant: str, kind: str = "labelled", sorted_: bool = False, solvent: str | None = None
) -> float:
    sel = pairs[(pairs.variant == variant) & (pairs.kind == kind)]
    if solvent is not None:
        sel = sel[sel.solvent_group == solvent]
    if sel.empty:
        return float("nan")
    return pooled(sel.sorted_pred, sel.sorted_obs)["mae"] if sorted_ else pooled(sel.pred, sel.true)["mae"]


def smoke_claims(pairs: pd.DataFrame, metrics: dict[str, Any], settings: dict[str, Any], seed: int) -> list[Claim]:
    """Exact-property and direction-of-effect claims on the embedded data (brief §8)."""
    margins = settings["claims"]
    gaps = matching_identity_gap(margins["identity_pairs"], margins["identity_max_size"], seed)
    concave = sorted_matching_cost([0, 1], [0.9, 2], np.sqrt) - optimal_matching_cost([0, 1], [0.9, 2], np.sqrt)
    claims = [
        Claim(
            "sort_equals_hungarian",
            "Sorting gives the optimal matching cost for convex pair costs (L1, L2, Huber) on random set pairs",
            "smoke",
            max(gaps.values()),
            Test("<=", 1e-9),
            paper_value="identical on 1,000 random pairs",
            paper_source="brief §2 rebuttal; §3",
            details={"gaps": gaps, "pairs": margins["identity_pairs"]},
        ),
        Claim(
            "concave_counterexample",
            "With concave f = sqrt the sorted pairing is not optimal ({0,1} vs {0.9,2}: 1.949 vs 1.730)",
            "smoke",
            concave,
            Test("within", 0.219, abs_tol=0.001),
            paper_value=0.219,
            paper_source="brief §8 (1.949 - 1.730)",
        ),
        Claim(
            "set_le_atom",
            "L_mol <= L_atom for every labelled test molecule (all variants)",
            "smoke",
            max(m["max_Lmol_minus_Latom_per_molecule"] for m in metrics["variants"].values()),
            Test("<=", 1e-6),
            paper_source="brief §6",
        ),
    ]
    for nucleus in settings["nuclei"]:
        sub = _same_folds(pairs, ["supervised", "semi"], nucleus)
        ratio = _mae(sub, "semi") / _mae(sub, "supervised")
        claims.append(
            Claim(
                f"semi_beats_supervised_{nucleus}",
                f"{nucleus}: with scarce labels, semi-supervised atom-level MAE < supervised-only (ratio semi/supervised)",
                "smoke",
                ratio,
                Test("<", margins["semi_ratio_below"]),
                paper_value=_reported_ratio(settings, nucleus),
                paper_source="resources/nmrshift/reported.yaml (NMRShiftDB2 L_atom MAE)",
                details={
                    "semi_mae": _mae(sub, "semi"),
                    "supervised_mae": _mae(sub, "supervised"),
                    "folds": sorted(int(f) for f in sub.fold.unique()),
                },
            )
        )
        if "hose" in metrics["variants_by_nucleus"].get(nucleus, []):
            sub = _same_folds(pairs, ["semi", "hose"], nucleus)
            ratio = _mae(sub, "semi") / _mae(sub, "hose")
            claims.append(
                Claim(
                    f"semi_beats_hose_{nucleus}",
                    f"{nucleus}: semi-supervised atom MAE below the HOSE-like environment lookup on the same labelled data (ratio)",
                    "smoke",
                    ratio,
                    Test("<", 1.0),
                    paper_value=_reported_value(settings, f"hose_Latom_mae_{nucleus}"),
                    paper_source="resources/nmrshift/reported.yaml (HOSE row, NMRShiftDB2 L_atom MAE)",
                    details={"semi": _mae(sub, "semi"), "hose": _mae(sub, "hose")},
                )
            )
        if "semi_hungarian" in metrics["variants_by_nucleus"].get(nucleus, []):
            sub = _same_folds(pairs, ["semi", "semi_hungarian"], nucleus)
            rel = abs(_mae(sub, "semi_hungarian") - _mae(sub, "semi")) / _mae(sub, "semi")
            claims.append(
                Claim(
                    f"hungarian_twin_{nucleus}",
                    f"{nucleus}: training with Hungarian matching instead of sorting gives the same atom MAE (relative difference)",
                    "smoke",
                    rel,
                    Test("<", margins["twin_rel_diff"]),
                    paper_value="identical",
                    paper_source="brief §2 rebuttal",
                    details={"sort": _mae(sub, "semi"), "hungarian": _mae(sub, "semi_hungarian")},
                )
            )
        if "weak_only" in metrics["variants_by_nucleus"].get(nucleus, []):
            sub = _same_folds(pairs, ["semi", "weak_only"], nucleus)
            weak_gap = _mae(sub, "weak_only") / _mae(sub, "weak_only", sorted_=True)
            semi_gap = _mae(sub, "semi") / _mae(sub, "semi", sorted_=True)
            claims.append(
                Claim(
                    f"weak_only_collapse_{nucleus}",
                    f"{nucleus}: weak-only training leaves atom MAE much larger than set MAE (atom/set ratio, relative to the semi-supervised ratio)",
                    "smoke",
                    weak_gap / semi_gap,
                    Test(">", margins["collapse_ratio_above"]),
                    paper_value="atom-level error much worse than set-level",
                    paper_source="brief §2 ablations",
                    details={"weak_atom_over_set": weak_gap, "semi_atom_over_set": semi_gap},
                )
            )
        if "semi_nosolvent" in metrics["variants_by_nucleus"].get(nucleus, []):
            sub = _same_folds(pairs, ["semi", "semi_nosolvent"], nucleus)
            with_s = _mae(sub, "semi", kind="unlabelled", sorted_=True, solvent="DMSO-d6")
            without = _mae(sub, "semi_nosolvent", kind="unlabelled", sorted_=True, solvent="DMSO-d6")
            claims.append(
                Claim(
                    f"solvent_dmso_{nucleus}",
                    f"{nucleus}: [CLS] solvent conditioning lowers set-MAE on held-out DMSO-d6 spectra (ratio with/without)",
                    "smoke",
                    with_s / without,
                    Test("<", 1.0),
                    paper_value=_reported_value(settings, "dmso_1H_mae_ratio") if nucleus == "1H" else None,
                    paper_source="resources/nmrshift/reported.yaml",
                    details={"with": with_s, "without": without},
                )
            )
    return claims


def _reported(settings: dict[str, Any]) -> dict[str, Any]:
    return load_reported(settings["reported_file"])


def _reported_value(settings: dict[str, Any], key: str) -> float | None:
    entry = _reported(settings).get(key)
    return entry["value"] if entry else None


def _reported_ratio(settings: dict[str, Any], nucleus: str) -> float:
    rep = _reported(settings)
    return rep[f"semi_Latom_mae_{nucleus}"]["value"] / rep[f"supervised_Latom_mae_{nucleus}"]["value"]


def full_claims(metrics: dict[str, Any], settings: dict[str, Any]) -> list[Claim]:
    """Paper-scale claims: our semi-supervised numbers against the reported ones with their tolerance."""
    claims = []
    for key, entry in _reported(settings).items():
        if "metric" not in entry:
            continue
        variant, block, nucleus = entry["metric"]["variant"], entry["metric"]["block"], entry["metric"]["nucleus"]
        ours = metrics["variants"].get(f"{nucleus}/{variant}", {}).get(block, {}).get("mae")
        claims.append(
            Claim(
                key,
                entry["statement"],
                "full",
                ours,
                Test("within", entry["value"], rel_tol=entry.get("rel_tol", 0.03)),
                paper_value=entry["value"],
                paper_source=entry["source"],
            )
        )
    return claims


def main(job) -> None:
    settings = job.params.settings
    predictions = pd.concat([pd.read_parquet(p) for p in job.input.predictions], ignore_index=True)
    pairs = joined_pairs(predictions, pd.read_parquet(job.input.labelled), pd.read_parquet(job.input.unlabelled))
    metrics: dict[str, Any] = {"variants": {}, "variants_by_nucleus": {}}
    for (nucleus, variant), group in pairs.groupby(["nucleus", "variant"]):
        metrics["variants"][f"{nucleus}/{variant}"] = variant_metrics(group)
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
    claims = smoke_claims(pairs, metrics, settings, job.params.seed)
    if job.params.scale == "full":
        claims += full_claims(metrics, settings)
    write_json(job.output.metrics, metrics)
    write_claims(job.output.claims, "nmrshift", claims)
    with atomic_path(job.output.pairs) as tmp:
        pairs.to_parquet(tmp, index=False)
