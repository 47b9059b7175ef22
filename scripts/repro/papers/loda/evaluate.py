"""Stage: LoDA's metrics (A_last, A_avg, forgetting, BWT per method and seed; energy diagnostics; the exact
checks against scipy on the stored moments and recalibration systems), then its claims."""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.linalg

from repro.metrics.learning import average_accuracy, backward_transfer, forgetting
from repro.papers.loda.claims import CLAIMS
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_json, read_npz, write_json


def average_incremental(acc: np.ndarray) -> float:
    """A_avg: mean over tasks j of the mean accuracy on tasks 1..j right after task j."""
    return float(np.mean([np.mean(acc[j, : j + 1]) for j in range(len(acc))]))


def method_metrics(runs: dict[str, np.ndarray], methods: list[str], seeds: list[int]) -> dict:
    out = {}
    for m in methods:
        accs = [runs[f"{m}/{s}/acc"] for s in seeds]
        out[m] = {
            "a_last": [average_accuracy(a) for a in accs],
            "a_avg": [average_incremental(a) for a in accs],
            "forgetting": [forgetting(a) for a in accs],
            "bwt": [backward_transfer(a) for a in accs],
        }
    return out


def learning_errors(runs: dict[str, np.ndarray], methods: list[str], seeds: list[int]) -> dict:
    """Per test item of every task: each method's 0/1 error right after training on that task (mean over
    seeds: did it learn the task, before any forgetting) and the class prior's (the most frequent training
    label of the task sequence, predicted for every item)."""
    y = runs["test/y"]
    prior = int(np.argmax(np.bincount(runs["train/y"])))
    out = {"trivial": (y != prior).astype(float).tolist()}
    for m in methods:
        out[m] = (1.0 - np.mean([runs[f"{m}/{s}/learned_correct"] for s in seeds], axis=0)).tolist()
    return out


def exact_checks(systems: dict[str, np.ndarray], rank: int, eps: float) -> dict:
    """Against scipy: principal angles of U_I to eigh(S_new, S_old + eps I)'s top vectors, U_G's
    orthonormality, and the normal-equation residual of each recalibration."""
    angles, ortho, residual = [], [], []
    for key in systems:
        if not key.endswith("/isolated"):
            continue
        stem = key[: -len("/isolated")]
        s_old, s_new = systems[f"{stem}/s_old"], systems[f"{stem}/s_new"]
        d = s_old.shape[0]
        reg = s_old + eps * (np.trace(s_old) / d if np.trace(s_old) > 0 else 1.0) * np.eye(d)
        _, vecs = scipy.linalg.eigh(s_new, reg)
        reference = vecs[:, -rank:]
        angles.append(float(np.max(scipy.linalg.subspace_angles(systems[key], reference))))
        g = systems[f"{stem}/general"]
        ortho.append(float(np.max(np.abs(g.T @ g - np.eye(g.shape[1])))))
        if f"{stem}/system" in systems:
            m, b, lam = systems[f"{stem}/system"], systems[f"{stem}/rhs"], systems[f"{stem}/scale"]
            # least-squares normal equations M^T (M lambda - b) = 0, relative to ||M^T b||
            r = m.T @ (m @ lam - b)
            residual.append(float(np.linalg.norm(r) / max(np.linalg.norm(m.T @ b), 1e-300)))
    return {
        "isolated_max_principal_angle": float(np.max(angles)) if angles else float("nan"),
        "general_max_orthonormality_error": float(np.max(ortho)) if ortho else float("nan"),
        "recalibration_max_residual": float(np.max(residual)) if residual else float("nan"),
        "bases_checked": len(angles),
    }


def energy_summary(energies: pd.DataFrame, seeds: list[int]) -> dict:
    """Per seed: mean over (task, layer) of the share of the best rank-r new-task energy each basis captures."""
    loda = energies[energies["method"] == "loda"]
    out = {}
    for basis in ("isolated", "null", "general"):
        share = loda[f"new_{basis}"] / loda["new_energy_top"]
        out[f"new_share_{basis}"] = [float(share[loda["seed"] == s].mean()) for s in seeds]
        ratio = loda[f"new_{basis}"] / loda[f"old_{basis}"].clip(lower=1e-12)
        out[f"new_old_ratio_{basis}"] = [float(ratio[loda["seed"] == s].median()) for s in seeds]
    return out


def main(job) -> None:
    meta = read_json(job.input.meta)
    lora = job.params.settings["lora"]
    runs = read_npz(job.input.runs)
    metrics = {
        "methods": method_metrics(runs, meta["methods"], meta["seeds"]),
        "learning": learning_errors(runs, meta["methods"], meta["seeds"]),
        "energy": energy_summary(pd.read_parquet(job.input.energies), meta["seeds"]),
        "checks": exact_checks(read_npz(job.input.systems), lora["rank_isolated"], lora["eps"]),
        "accuracy_matrix": {
            m: np.mean([runs[f"{m}/{s}/acc"] for s in meta["seeds"]], 0).tolist() for m in meta["methods"]
        },
        "domains": meta["domains"],
    }
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "loda", claims)
