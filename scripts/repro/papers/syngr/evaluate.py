"""Stage: HR@K and NDCG@K per benchmark, variant and seed from the test rankings, the checks, then the claims."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.papers.syngr.claims import CLAIMS
from repro.papers.syngr.metrics import hit_rate, ndcg
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, write_json

CHECKS = ("invalid", "generated", "collisions", "masking_deviation")


def scores(rank: np.ndarray, ks: list[int]) -> dict[str, float]:
    return {f"hr@{k}": hit_rate(rank, k) for k in ks} | {f"ndcg@{k}": ndcg(rank, k) for k in ks if k > 1}


def benchmark_metrics(path: str, ks: list[int]) -> tuple[str, dict, dict]:
    """Per-variant per-seed scores and attention shares of one runs file, and its check counts."""
    with np.load(path) as z:
        runs = {k: z[k] for k in z.files}
    if "rank" not in runs or runs["rank"].ndim != 3:
        raise InputError(path, "runs file lacks the (variant, seed, user) rank array")
    out = {"users": int(runs["rank"].shape[2]), "seeds": runs["seeds"].tolist(), "variants": {}}
    for v, name in enumerate(runs["variants"].tolist()):
        per_seed = [scores(r, ks) for r in runs["rank"][v]]
        out["variants"][name] = (
            {key: [s[key] for s in per_seed] for key in per_seed[0]}
            | {key: runs[key][v].tolist() for key in ("share_before", "share_after", "train_seconds")}
            | {"user_rank": runs["rank"][v].tolist()}  # (seeds, users): the claims' paired per-user intervals
        )
        if "user_share_after" in runs:
            out["variants"][name]["user_share_after"] = runs["user_share_after"][v].tolist()
    out["popularity"] = scores(runs["popularity_rank"], ks)
    out["popularity_rank"] = runs["popularity_rank"].tolist()
    return Path(path).stem, out, {key: runs[key] for key in CHECKS}


def main(job) -> None:
    settings = job.params.settings
    ks = [k for k in settings["eval"]["ks"] if k <= settings["eval"]["beams"]]
    metrics: dict = {"ks": ks, "real": list(settings["real"]), "benchmarks": {}}
    checks: dict[str, list] = {key: [] for key in CHECKS}
    for path in job.input.runs:
        name, values, counts = benchmark_metrics(path, ks)
        metrics["benchmarks"][name] = values
        for key in CHECKS:
            checks[key].append(counts[key].ravel())
    metrics["checks"] = {
        "invalid_generations": int(np.sum(np.concatenate(checks["invalid"]))),
        "generated": int(np.sum(np.concatenate(checks["generated"]))),
        "id_collisions": int(np.max(np.concatenate(checks["collisions"]))),
        "masking_deviation": int(np.max(np.concatenate(checks["masking_deviation"]))),
    }
    reported = load_reported(job.input.reported)
    metrics["reported"] = {k: e["value"] for k, e in reported.items() if isinstance(e.get("value"), int | float)}
    write_json(job.output.metrics, metrics)
    write_claims(job.output.claims, "syngr", evaluate_claims(CLAIMS, metrics, job.params.scale, reported))
