"""Stage: metrics of the optimisation runs and the gradient checks, metrics.json and claims.json."""

from __future__ import annotations

import numpy as np

from repro.papers.neural_control.claims import CLAIMS
from repro.papers.neural_control.files import load_arrays
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import read_json, write_json

RUN_KEYS = ("methods", "seeds", "best_loss", "solves", "updates", "wall_s", "branch", "failures", "initial_loss")


def task_metrics(runs: dict[str, np.ndarray], cases: dict[str, np.ndarray]) -> dict:
    """Per method: best loss per (case, seed), its median over cases per seed, solves, time, branch success."""
    methods = [str(m) for m in runs["methods"]]
    target_branch = cases["branch"][:, None]
    out = {"seeds": runs["seeds"].tolist(), "initial_loss": runs["initial_loss"].tolist(), "methods": {}}
    for m, method in enumerate(methods):
        loss = runs["best_loss"][m]
        out["methods"][method] = {
            "best_loss": loss.tolist(),
            "median_loss_per_seed": np.median(loss, axis=0).tolist(),
            "mean_loss": float(np.mean(loss)),
            "solves_mean": float(np.mean(runs["solves"][m])),
            "updates_mean": float(np.mean(runs["updates"][m])),
            "wall_s_mean": float(np.mean(runs["wall_s"][m])),
            "solver_failures": int(np.sum(runs["failures"][m])),
            "branch_success": float(np.mean(runs["branch"][m] == target_branch)),
        }
    return out


def gradient_metrics(grads: dict) -> dict:
    fd = grads["finite_differences"]
    mem = sorted(grads["memory"], key=lambda r: r["newton_iterations"])
    lo, hi = mem[0], mem[-1]
    same_basin = all(r["same_basin"] and r["converged"] for r in fd)
    return {
        "fd_max_relative_error": float(np.max([r["relative_error"] for r in fd])) if same_basin else float("nan"),
        "fd_checks": fd,
        "memory": mem,
        "newton_iteration_ratio": hi["newton_iterations"] / lo["newton_iterations"],
        "adjoint_memory_growth": hi["adjoint_bytes"] / lo["adjoint_bytes"],
        "unrolled_memory_growth": hi["unrolled_bytes"] / lo["unrolled_bytes"],
        "unrolled_vs_adjoint_gradient_difference": float(mem[-1]["gradient_difference"]),
    }


def learned_metrics(learned: dict) -> dict:
    """The learned equilibrium model's checks and, per method, best tracking loss per (case, seed)."""
    methods = {
        m: {
            "median_loss_per_seed": np.median(np.asarray(r["best_loss"], dtype=float), axis=0).tolist(),
            "max_segment_loss_median": float(np.median(np.asarray(r["max_segment_loss"], dtype=float))),
        }
        for m, r in learned["methods"].items()
    }
    for m, r in learned["methods"].items():
        methods[m]["best_loss"] = r["best_loss"]
    keys = (
        "heldout_relative_error",
        "ift_fd_relative_error_parameters",
        "ift_fd_relative_error_controls",
        "heldout_sq_error",
        "heldout_sq_error_of_mean",
        "initial_loss",
    )
    return {"learned": {k: learned[k] for k in keys} | {"methods": methods}}


def main(job) -> None:
    metrics: dict = {"tasks": {}}
    for path, cases_path in zip(job.input.runs, job.input.cases):
        name = path.rsplit("/", 1)[-1].removesuffix(".npz")
        metrics["tasks"][name] = task_metrics(
            load_arrays(path, RUN_KEYS, "runs"), load_arrays(cases_path, ("branch",), "task cases")
        )
    metrics |= gradient_metrics(read_json(job.input.gradients))
    metrics |= learned_metrics(read_json(job.input.learned))
    write_json(job.output.metrics, metrics)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "neural-control", claims)
