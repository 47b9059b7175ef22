"""The agent stage's dialogues on a tiny GGUF model: every configuration ends, the ReAct loop shares the
agent's first call, revisions leave out what the verifier ruled out, and a rerun is identical."""

from __future__ import annotations

import numpy as np
from test_language_model import tiny  # noqa: F401 - the tiny GGUF model fixture
from test_sp_mind_agent import data  # noqa: F401 - the synthetic CyCIF tables

from repro.data.language.fast import load_fast
from repro.papers.sp_mind.agent import run
from repro.papers.sp_mind.bench import task_specs
from repro.papers.sp_mind.calls import parse_call
from repro.papers.sp_mind.data import reference_answers

CFG = {
    "max_calls": 3,
    "reasoning_tokens": 2,
    "typed_tools": True,
    "prune": True,
    "digits": 2,
    "chunk": 16,
    "batch_tasks": 1,
    "matmul_dtype": "float32",
}


def test_every_configuration_runs_to_its_end_and_reruns_identically(tiny, data):  # noqa: F811
    model = load_fast(tiny[0])
    specs = [s for s in reference_answers(data, task_specs(1, "log1p", 0, 10)) if s["category"] in ("gating", "qc")]
    episodes, stats = run(model, data, specs, CFG)
    again, _ = run(model, data, specs, CFG)
    assert episodes == again
    assert set(episodes) == {"agent", "react", "agent_no_docs"}
    for per_task in episodes.values():
        assert set(per_task) == {s["id"] for s in specs}
        for ep in per_task.values():
            assert 1 <= len(ep["calls"]) <= CFG["max_calls"]
            assert ep["turn_tokens"] == sorted(ep["turn_tokens"]) and ep["tokens"] >= ep["turn_tokens"][0]
            for call in ep["calls"]:
                parsed = parse_call(call["call"])
                assert parsed["skill"] in (
                    "gate",
                    "co_positive",
                    "phenotype_fraction",
                    "neighbour_fraction",
                    "count_cells",
                    "phenotype_count",
                )
    for task in episodes["agent"]:
        agent, react = episodes["agent"][task], episodes["react"][task]
        assert agent["calls"][0]["call"] == react["calls"][0]["call"]  # forked after the shared first call
        assert agent["turn_tokens"][0] == react["turn_tokens"][0]
        # The agent stops at the first call the verifier accepts, or at the call limit.
        findings = [bool(c["findings"]) for c in agent["calls"]]
        assert all(findings[:-1]) and (not findings[-1] or len(findings) == CFG["max_calls"])
        assert "findings" not in react["calls"][0]
        # A value the verifier said the task does not name is never written again.
        for earlier, later in zip(agent["calls"], agent["calls"][1:]):
            for finding in earlier["findings"]:
                if finding.endswith(" is not in the task"):
                    name = finding.removesuffix(" is not in the task")
                    assert name not in [str(v) for v in parse_call(later["call"])["params"].values()]
    assert stats.model_choices > 0 and stats.prefix_tokens > 0 and np.isfinite(stats.fed_tokens)
