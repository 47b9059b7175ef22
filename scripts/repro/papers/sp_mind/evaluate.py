"""Stage: grade every configuration's answers on SP-Bench-mini, the random-call baseline, metrics and claims.

Configurations (the LLM ones from the agent stage's episodes, each answer re-run from its call): ``agent``
(SP-Mind: skill docs, verify-and-revise), ``agent_no_verify`` (its first call), ``react`` (plain ReAct loop),
``agent_no_docs`` (and its first call, ``agent_no_docs_no_verify``), ``random`` (the trivial agent: calls
drawn uniformly over the same typed call grammar, ``draws`` per task; its per-task success is the share of
draws that pass) and ``reference`` (each task's reference call). Graders are run twice to check that they
are deterministic, and the verifier is run on every reference call (it must accept all of them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.papers.sp_mind.bench import grade, read_tasks
from repro.papers.sp_mind.calls import execute, parse_call
from repro.papers.sp_mind.claims import CLAIMS
from repro.papers.sp_mind.grammar import random_call, value_domains
from repro.papers.sp_mind.reference import phenotype_counts
from repro.papers.sp_mind.skills import Data, load_data, tools_for
from repro.papers.sp_mind.verifier import findings
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError, read_json, write_json

LLM_CONFIGS = ("agent", "agent_no_verify", "react", "agent_no_docs", "agent_no_docs_no_verify")


def answer_of(data: Data, spec: dict, call: dict | None):
    if call is None:
        return None
    result, error = execute(data, call, spec["reference"].get("hidden"))
    return None if error is not None else result


def llm_rows(data: Data, specs: list[dict], episodes: dict) -> list[dict]:
    rows = []
    for config in LLM_CONFIGS:
        source, first_only = (
            (config.removesuffix("_no_verify"), True) if config.endswith("_no_verify") else (config, False)
        )
        if source not in episodes:
            raise InputError("episodes.json", f"no episodes of configuration {source!r}")
        for spec in specs:
            ep = episodes[source].get(spec["id"])
            if ep is None:
                raise InputError("episodes.json", f"configuration {source!r} has no episode of task {spec['id']!r}")
            calls = ep["calls"][:1] if first_only else ep["calls"]
            call = (parse_call(calls[0]["call"]) if first_only else ep["answer"]) if calls else None
            rows.append(
                {
                    "config": config,
                    "task": spec["id"],
                    "category": spec["category"],
                    "success": float(grade(spec, answer_of(data, spec, call))),
                    "calls": len(calls),
                    "tokens": ep["turn_tokens"][0] if first_only and ep["turn_tokens"] else ep["tokens"],
                    "rejected": int(np.sum([bool(c.get("findings")) for c in calls])),
                }
            )
    return rows


def random_rows(data: Data, specs: list[dict], cfg: dict, typed: bool, digits: int) -> list[dict]:
    """The trivial agent: ``draws`` random calls per task (seeded by the run's seed and the task's index)."""
    domains = value_domains(data.markers, data.phenotypes)
    rows = []
    for i, spec in enumerate(specs):
        rng = np.random.default_rng([cfg["seed"], i])
        tools = tools_for(spec["answer_type"], typed)
        wins = [
            grade(spec, answer_of(data, spec, random_call(tools, domains, rng, digits))) for _ in range(cfg["draws"])
        ]
        rows.append(
            {
                "config": "random",
                "task": spec["id"],
                "category": spec["category"],
                "success": float(np.mean(wins)),
                "calls": 1,
                "tokens": 0,
                "rejected": 0,
            }
        )
    return rows


def reference_rows(data: Data, specs: list[dict]) -> tuple[list[dict], list[bool], int]:
    rows, regraded, flagged = [], [], 0
    for spec in specs:
        ref = spec["reference"]
        call = {"skill": ref["skill"], "params": ref["params"]}
        answer = answer_of(data, spec, call)
        result, error = execute(data, call, ref.get("hidden"))
        flagged += bool(findings(spec, call, result, error, data))
        success = grade(spec, answer)
        regraded.append(grade(spec, answer) == success)
        rows.append(
            {
                "config": "reference",
                "task": spec["id"],
                "category": spec["category"],
                "success": float(success),
                "calls": 1,
                "tokens": 0,
                "rejected": 0,
            }
        )
    return rows, regraded, flagged


def revision_counts(runs: pd.DataFrame, verified: str, first: str) -> dict:
    """How verify-and-revise changed the first answers: fixed (wrong -> right) and broken (right -> wrong)."""
    a = runs[runs.config == verified].set_index("task")["success"]
    b = runs[runs.config == first].set_index("task")["success"].reindex(a.index)
    return {"fixed": int(np.sum((a > 0) & (b == 0))), "broken": int(np.sum((a == 0) & (b > 0)))}


def metrics_of(runs: pd.DataFrame, specs: list[dict], data: Data, regraded: list[bool], flagged: int) -> dict:
    success, per_category, per_task, cost = {}, {}, {}, {}
    for config, g in runs.groupby("config", sort=False):
        success[config] = float(g["success"].mean())
        per_category[config] = {c: float(v) for c, v in g.groupby("category", sort=True)["success"].mean().items()}
        per_task[config] = {t: float(v) for t, v in zip(g["task"], g["success"])}
        cost[config] = {k: float(g[k].mean()) for k in ("calls", "tokens", "rejected")}
    numpy_counts = {str(k): int(v) for k, v in zip(*np.unique(data.labels(data.gate_scale), return_counts=True))}
    pandas_counts = phenotype_counts(data.cells, data.gates, data.workflow)
    names = sorted(set(numpy_counts) | set(pandas_counts))
    return {
        "tasks": len(specs),
        "categories": sorted({s["category"] for s in specs}),
        "success": success,
        "per_category": per_category,
        "per_task": per_task,
        "cost": cost,
        "revisions": {
            "agent": revision_counts(runs, "agent", "agent_no_verify"),
            "agent_no_docs": revision_counts(runs, "agent_no_docs", "agent_no_docs_no_verify"),
        },
        "grader_rerun_agreement": float(np.mean(regraded)),
        "verifier_rejects_reference": int(flagged),
        "phenotype_counts": {"numpy": numpy_counts, "pandas": pandas_counts},
        "phenotype_paths_mismatch": int(np.sum([abs(numpy_counts.get(k, 0) - pandas_counts.get(k, 0)) for k in names])),
        "agreement_with_scimap_phenotypes": float(np.mean(data.labels(data.gate_scale) == data.cells["phenotype_ref"])),
    }


def main(job) -> None:
    cfg = job.params.settings
    specs = read_tasks(job.input.tasks)
    data = load_data(job.input.cells, job.input.gates, job.input.workflow)
    content = read_json(job.input.episodes)
    episodes = content["episodes"]
    reference, regraded, flagged = reference_rows(data, specs)
    rows = (
        llm_rows(data, specs, episodes)
        + random_rows(data, specs, cfg["baseline"], cfg["agent"]["typed_tools"], cfg["agent"]["digits"])
        + reference
    )
    runs = pd.DataFrame(rows)
    metrics = metrics_of(runs, specs, data, regraded, flagged)
    metrics["model"] = {"name": content["model"], "sha256": content["model_sha256"], "run": content["stats"]}
    write_json(job.output.runs, runs.to_dict(orient="records"))
    write_json(job.output.metrics, metrics)
    write_claims(
        job.output.claims,
        "sp-mind",
        evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported)),
    )
