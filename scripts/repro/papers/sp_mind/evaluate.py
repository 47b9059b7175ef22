"""Stage: run every planner on SP-Bench-mini with and without verify-and-revise, grade, metrics and claims.

Configurations: the agent (retrieval planner with skills docs + verify-and-revise), the same without
verification (first attempt only), without skills docs, the rule planner (both ways), the random-tool
baseline, the reference solver, and, when their replies are given, LLM planners (SmolLM2 offline, or a
hosted model). Graders are run twice to check they are deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from repro.papers.sp_mind.agent import solve
from repro.papers.sp_mind.bench import grade, read_tasks
from repro.papers.sp_mind.claims import CLAIMS
from repro.papers.sp_mind.planners import LLMPlanner, RandomPlanner, RetrievalPlanner, RulePlanner
from repro.papers.sp_mind.reference import phenotype_counts
from repro.papers.sp_mind.skills import SKILLS, Data
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, write_json


def load_data(cells: str, gates: str, workflow: str) -> Data:
    try:
        return Data(pd.read_parquet(cells), pd.read_parquet(gates), pd.read_parquet(workflow))
    except (OSError, ValueError) as err:
        raise InputError(cells, f"cannot read the cell tables ({err})") from err


def planners(cfg: dict, replies: dict[str, dict[str, str]]) -> dict:
    out = {
        "rule": RulePlanner(),
        "retrieval": RetrievalPlanner(docs=True),
        "retrieval_no_docs": RetrievalPlanner(docs=False),
        "random": RandomPlanner(cfg["seed"]),
    }
    return out | {name: LLMPlanner(name, r) for name, r in replies.items()}


def run_all(data: Data, specs: list[dict], cfg: dict, replies: dict) -> list[dict]:
    rows = []
    for name, planner in planners(cfg, replies).items():
        subset = {t for t in replies[name]} if name in replies else None
        for verify in (True, False):
            for spec in specs:
                if subset is not None and spec["id"] not in subset:
                    continue
                result = solve(data, planner, spec, verify, cfg["max_attempts"])
                rows.append(
                    {
                        "planner": name,
                        "verify": verify,
                        "task": spec["id"],
                        "category": spec["category"],
                        "success": grade(spec, result["answer"]),
                        "calls": result["calls"],
                        "revisions": len(result["failures"]),
                        "answer": None if result["answer"] is None else str(result["answer"]),
                    }
                )
    for spec in specs:
        ref = spec["reference"]
        answer = SKILLS[ref["skill"]].run(data, **ref["params"])
        rows.append(
            {
                "planner": "reference",
                "verify": False,
                "task": spec["id"],
                "category": spec["category"],
                "success": grade(spec, answer),
                "calls": 1,
                "revisions": 0,
                "answer": str(answer),
            }
        )
    return rows


def metrics_of(runs: pd.DataFrame, specs: list[dict], data: Data) -> dict:
    def key(planner: str, verify: bool) -> str:
        return f"{planner}{'' if verify else '_no_verify'}" if planner != "reference" else "reference"

    success, per_category, per_task, cost = {}, {}, {}, {}
    for (planner, verify), g in runs.groupby(["planner", "verify"], sort=False):
        k = key(planner, verify)
        success[k] = float(g["success"].mean())
        per_category[k] = {c: float(v) for c, v in g.groupby("category")["success"].mean().items()}
        per_task[k] = {t: bool(v) for t, v in zip(g["task"], g["success"])}
        cost[k] = {"calls": float(g["calls"].mean()), "revisions": float(g["revisions"].mean())}
    regraded = [grade(s, a) for s, a in zip(specs, runs[runs.planner == "reference"]["answer"])]
    first = runs[runs.planner == "reference"]["success"].tolist()
    numpy_counts = {k: int(v) for k, v in zip(*np.unique(data.labels("log1p"), return_counts=True))}
    pandas_counts = phenotype_counts(data.cells, data.gates, data.workflow)
    ref_col = data.cells["phenotype_ref"].to_numpy()
    return {
        "tasks": len(specs),
        "categories": sorted({s["category"] for s in specs}),
        "success": success,
        "per_category": per_category,
        "per_task": per_task,
        "cost": cost,
        "grader_rerun_agreement": float(np.mean(np.array(regraded) == np.array(first))),
        "phenotype_counts": {"numpy": numpy_counts, "pandas": pandas_counts},
        "phenotype_paths_mismatch": int(
            sum(abs(numpy_counts.get(k, 0) - pandas_counts.get(k, 0)) for k in set(numpy_counts) | set(pandas_counts))
        ),
        "agreement_with_scimap_phenotypes": float(np.mean(data.labels("log1p") == ref_col)),
    }


def main(job) -> None:
    cfg = job.params.settings
    specs = read_tasks(job.input.tasks)
    data = load_data(job.input.cells, job.input.gates, job.input.workflow)
    replies = {}
    for path in getattr(job.input, "replies", []) or []:
        content = json.loads(Path(path).read_text())
        replies[content["planner"]] = content["replies"]
    runs = pd.DataFrame(run_all(data, specs, cfg["agent"], replies))
    metrics = metrics_of(runs, specs, data)
    write_json(job.output.runs, runs.to_dict(orient="records"))
    write_json(job.output.metrics, metrics)
    write_claims(
        job.output.claims,
        "sp-mind",
        evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported)),
    )
