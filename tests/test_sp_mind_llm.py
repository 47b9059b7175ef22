"""The LLM planner: replies parsed into a tool ranking; the offline planner's prompts through the language
source (a tiny GGUF model here), memoised."""

from __future__ import annotations

from test_language_model import tiny  # noqa: F401 - the tiny GGUF model fixture

from repro.data.language.model import load_gguf_model
from repro.papers.sp_mind.llm_plan import replies_for
from repro.papers.sp_mind.planners import LLMPlanner, llm_prompt, parse_skill
from repro.papers.sp_mind.skills import SKILLS


def test_replies_name_the_first_tool_and_retrieval_fills_the_rest():
    assert parse_skill("I would call nearest distance, then gate") == "nearest_distance"
    assert parse_skill("no idea") is None
    planner = LLMPlanner("smollm2", {"sp001": "Use `interaction`."})
    ranked = planner.rank("How many cells lie in ROI1?", "sp001")
    assert ranked[0] == "interaction" and sorted(ranked) == sorted(SKILLS)
    assert planner.rank("How many cells lie in ROI1?", "sp002")[0] != "interaction"
    assert "count_cells: Count cells" in llm_prompt("q") and "count_cells:" not in llm_prompt("q", docs=False)


def test_offline_planner_replies_are_memoised(tiny, tmp_path):  # noqa: F811
    lm = load_gguf_model(tiny[0])
    specs = [{"id": "sp000", "prompt": "How many cells?"}, {"id": "sp001", "prompt": "Gate CD45."}]
    cfg = {"max_new_tokens": 3, "batch_size": 2, "cache": str(tmp_path)}
    first = replies_for(lm, specs, cfg)
    assert set(first) == {"sp000", "sp001"} and len(list(tmp_path.rglob("*.json"))) == 2
    assert replies_for(lm, specs, cfg) == first
