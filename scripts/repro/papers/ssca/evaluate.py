"""Stage: aggregate the per-seed runs into metrics.json and claims.json."""

from __future__ import annotations

import numpy as np

from repro.papers.ssca.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_json, write_json

METHODS = ("ssca", "minus_sw_hub", "minus_spectral", "no_gaussianization", "infonce", "cca", "cca_hard_rank")
SPECTRAL = ("ssca", "no_gaussianization")
LEARNED = ("ssca", "minus_spectral", "no_gaussianization", "infonce")


def load_runs(path: str) -> dict:
    runs = read_json(path)
    if not isinstance(runs, dict) or not runs.get("runs") or "invariance" not in runs or "nutrimouse" not in runs:
        raise InputError(path, "expected runs (non-empty), invariance and nutrimouse entries")
    missing = [m for m in (*METHODS, "untrained", "gate", "gate_zscore", "gaussianization") if m not in runs["runs"][0]]
    if missing:
        raise InputError(path, f"runs lack {missing}")
    return runs


def gate_totals(runs: list[dict], key: str) -> dict:
    """False alarms and misses summed over seeds, per drift and alpha."""
    totals: dict = {}
    for run in runs:
        for drift, per_alpha in run[key].items():
            for alpha, counts in per_alpha.items():
                cell = totals.setdefault(drift, {}).setdefault(alpha, {"false_alarms": 0, "misses": 0, "n": 0})
                for k in cell:
                    cell[k] += counts[k]
    return totals


def miss_rates_per_seed(runs: list[dict], key: str, alpha: float) -> list[float]:
    """Per seed, the miss rate at ``alpha`` averaged over the drifts of the sweep."""
    return [
        float(np.mean([cells[str(alpha)]["misses"] / cells[str(alpha)]["n"] for cells in run[key].values()]))
        for run in runs
    ]


def summarise(doc: dict, gate_cfg: dict) -> dict:
    runs = doc["runs"]
    gate = gate_totals(runs, "gate")
    alpha = str(gate_cfg["design_alpha"])
    retrieval = {
        m: {key: float(np.mean([r[m]["retrieval"][key] for r in runs])) for key in runs[0][m]["retrieval"]}
        for m in METHODS
    }
    return {
        "seeds": [r["seed"] for r in runs],
        "recall_at_1": {m: [r[m]["retrieval"]["R@1"] for r in runs] for m in METHODS},
        "retrieval_mean": retrieval,
        "pair_rank": {m: [r[m]["pair_rank"] for r in runs] for m in (*LEARNED, "untrained")},
        "gaussianization": {
            "heldout_w2": [r["gaussianization"]["heldout_w2"] for r in runs],
            "heldout_w2_zscore": [r["gaussianization"]["heldout_w2_zscore"] for r in runs],
            "final_loss": [r["gaussianization"]["final_loss"] for r in runs],
        },
        "sin_theta": {m: [r[m]["davis_kahan"]["sin_theta"] for r in runs] for m in SPECTRAL},
        "davis_kahan": {m: [r[m]["davis_kahan"] for r in runs] for m in SPECTRAL} | {"nutrimouse": doc["nutrimouse"]},
        "davis_kahan_ratios": [r[m]["davis_kahan"]["ratio"] for r in runs for m in SPECTRAL]
        + [d["ratio"] for d in doc["nutrimouse"]],
        "hub_cycle_error": [r["hub"]["hub_cycle_error"] for r in runs],
        "direct_cycle_error": [r["hub"]["direct_cycle_error"] for r in runs],
        "sw_to_hub": [r["hub"]["sw_to_hub"] for r in runs],
        "dependence_weights": [r["hub"]["weights"] for r in runs],
        "invariance": doc["invariance"],
        "gate": gate,
        "gate_zscore": gate_totals(runs, "gate_zscore"),
        "gate_alpha": gate_cfg["design_alpha"],
        "gate_design": {
            "alpha": gate_cfg["design_alpha"],
            "drifts": {d: cells[alpha] for d, cells in gate.items()},
        },
        "gate_miss_rate_per_seed": {
            "gaussianized": miss_rates_per_seed(runs, "gate", gate_cfg["design_alpha"]),
            "zscore": miss_rates_per_seed(runs, "gate_zscore", gate_cfg["design_alpha"]),
        },
    }


def main(job) -> None:
    metrics = summarise(load_runs(job.input.runs), job.params.settings["gate"])
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "ssca", claims)
