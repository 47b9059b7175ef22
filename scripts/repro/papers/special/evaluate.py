"""Stage: SPECIAL's metrics from the accuracy matrices (repro.metrics.learning), then its claims.

Per method and seed: final average accuracy A_K, backward transfer BWT, forgetting and plasticity (mean
accuracy right after each task); paired differences against FedAvg per seed; BWT per swept value of N, T, E.
"""

from __future__ import annotations

import numpy as np

from repro.metrics.learning import average_accuracy, backward_transfer, forgetting
from repro.papers.special.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_json, read_npz, write_json


def per_run(acc: np.ndarray) -> dict[str, list[float]]:
    """Metrics of each seed's accuracy matrix (acc: seeds x K x K)."""
    return {
        "final_accuracy": [average_accuracy(a) for a in acc],
        "bwt": [backward_transfer(a) for a in acc],
        "forgetting": [forgetting(a) for a in acc],
        "plasticity": [float(np.mean(np.diag(a))) for a in acc],
    }


def learning_errors(runs: dict[str, np.ndarray], meta: dict, main_name: str) -> dict:
    """Per test item of every task: 0/1 error of the global model right after that task (mean over seeds) for
    FedAvg, SPECIAL at the main mu and SPECIAL at both ends of each sweep (pooled), and the class prior's."""
    y = runs["test/y"]
    prior = int(np.argmax(np.bincount(runs["train/y"])))
    out = {"trivial": (y != prior).astype(float).tolist()}
    main = meta["groups"]["main"]["variants"]
    for name in ("fedavg", main_name):
        out[name] = (1.0 - runs["main/learned"][main.index(name)].mean(0)).tolist()
    for key in ("per_round", "rounds", "local_epochs"):
        groups = [g for g in meta["groups"] if g.startswith(f"{key}=")]
        if groups:
            errors = [
                1.0 - runs[f"{g}/learned"][meta["groups"][g]["variants"].index("special")].mean(0) for g in groups
            ]
            out[f"sweep_{key}"] = np.mean(errors, axis=0).tolist()
    return out


def summarise(runs: dict[str, np.ndarray], meta: dict, settings: dict) -> dict:
    main = meta["groups"]["main"]["variants"]
    acc = runs["main/acc"]
    methods = {name: per_run(acc[v]) for v, name in enumerate(main)}
    main_name = f"special_mu{settings['main_mu']:g}"
    base = settings["protocol"]
    sweeps: dict[str, dict] = {}
    for key, values in settings["sweeps"].items():
        points = sorted({int(base[key]), *map(int, values)})
        rows = {"values": points, "special": []}
        for value in points:
            if value == int(base[key]):
                rows["special"].append(methods[main_name]["bwt"])
            else:
                acc_v = runs[f"{key}={value}/acc"][meta["groups"][f"{key}={value}"]["variants"].index("special")]
                rows["special"].append([backward_transfer(a) for a in acc_v])
        sweeps[key] = rows
    mu0 = main.index("special_mu0")
    return {
        "learning": learning_errors(runs, meta, main_name),
        "methods": methods,
        "main_method": main_name,
        "mu_values": [0.0, *map(float, settings["mu"])],
        "mu_names": ["special_mu0", *(f"special_mu{m:g}" for m in settings["mu"])],
        "mu0_max_abs_difference_from_fedavg": float(np.max(np.abs(acc[mu0] - acc[main.index("fedavg")]))),
        "max_segment_residual": float(np.max(runs["main/residual"])),
        "sweeps": sweeps,
        "final_accuracy_matrix": {name: acc[v].mean(0).tolist() for v, name in enumerate(main)},
        "grad_norm_mean": {name: runs["main/grad_norm"][v].mean(0).tolist() for v, name in enumerate(main)},
        "domains": meta["domains"],
    }


def main(job) -> None:
    metrics = summarise(read_npz(job.input.runs), read_json(job.input.meta), job.params.settings)
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "special", claims)
