"""Stage: aggregate the per-seed runs into metrics.json and claims.json."""

from __future__ import annotations

import numpy as np

from repro.papers.ssca.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_json, write_json

METHODS = ("ssca", "no_gaussianization", "infonce", "cca", "cca_hard_rank")
SPECTRAL = ("ssca", "no_gaussianization")


def load_runs(path: str) -> dict:
    runs = read_json(path)
    if not isinstance(runs, dict) or not runs.get("runs") or "invariance" not in runs or "nutrimouse" not in runs:
        raise InputError(path, "expected runs (non-empty), invariance and nutrimouse entries")
    return runs


def gate_totals(runs: list[dict]) -> dict:
    """False alarms and misses summed over seeds, per drift and alpha."""
    totals: dict = {}
    for run in runs:
        for drift, per_alpha in run["gate"].items():
            for alpha, counts in per_alpha.items():
                cell = totals.setdefault(drift, {}).setdefault(alpha, {"false_alarms": 0, "misses": 0, "n": 0})
                for key in cell:
                    cell[key] += counts[key]
    return totals


def summarise(doc: dict, gate_cfg: dict) -> dict:
    runs = doc["runs"]
    gate = gate_totals(runs)
    design = gate[str(gate_cfg["design_drift"])][str(gate_cfg["design_alpha"])]
    retrieval = {
        m: {key: float(np.mean([r[m]["retrieval"][key] for r in runs])) for key in runs[0][m]["retrieval"]}
        for m in METHODS
    }
    return {
        "seeds": [r["seed"] for r in runs],
        "recall_at_1": {m: [r[m]["retrieval"]["R@1"] for r in runs] for m in METHODS},
        "retrieval_mean": retrieval,
        "sin_theta": {m: [r[m]["davis_kahan"]["sin_theta"] for r in runs] for m in SPECTRAL},
        "davis_kahan": {m: [r[m]["davis_kahan"] for r in runs] for m in SPECTRAL} | {"nutrimouse": doc["nutrimouse"]},
        "davis_kahan_ratios": [r[m]["davis_kahan"]["ratio"] for r in runs for m in SPECTRAL]
        + [d["ratio"] for d in doc["nutrimouse"]],
        "hub_cycle_error": [r["hub"]["hub_cycle_error"] for r in runs],
        "direct_cycle_error": [r["hub"]["direct_cycle_error"] for r in runs],
        "sw_to_hub": [r["hub"]["sw_to_hub"] for r in runs],
        "dependence_weights": [r["ssca"]["weights"] for r in runs],
        "gaussianization_error": {
            key: float(np.mean([e[key] for r in runs for e in r["gaussianization_error"]]))
            for key in runs[0]["gaussianization_error"][0]
        },
        "invariance": doc["invariance"],
        "gate": gate,
        "gate_design": design | {"alpha": gate_cfg["design_alpha"], "drift": gate_cfg["design_drift"]},
    }


def main(job) -> None:
    metrics = summarise(load_runs(job.input.runs), job.params.settings["gate"])
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "ssca", claims)
