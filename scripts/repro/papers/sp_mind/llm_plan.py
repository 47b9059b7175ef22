"""Stage (torch env, config/full.yaml): SmolLM2-135M-Instruct picks each task's first tool, offline.

The planning prompt lists the skills (with their docs) and the query in the model's chat template; greedy
replies are memoised by the language source (model sha256, prompt, settings), so reruns are free. A hosted
LLM can fill the same replies file with the user's own key (:mod:`repro.papers.sp_mind.hosted`); tests never
call it.
"""

from __future__ import annotations

from repro.data.language.generate import GenerationSettings, generate
from repro.data.language.model import smollm2
from repro.papers.sp_mind.bench import read_tasks
from repro.papers.sp_mind.planners import llm_prompt
from repro.workflow.io import write_json


def replies_for(lm, specs: list[dict], cfg: dict) -> dict[str, str]:
    settings = GenerationSettings(max_new_tokens=cfg["max_new_tokens"], batch_size=cfg["batch_size"])
    prompts = [lm.chat_prompt(llm_prompt(s["prompt"], docs=True)) for s in specs]
    return {s["id"]: r["text"] for s, r in zip(specs, generate(lm, prompts, settings, cfg.get("cache")))}


def main(job) -> None:
    cfg = job.params.settings["llm"]
    specs = read_tasks(job.input.tasks)
    if cfg.get("tasks"):
        specs = specs[:: max(1, len(specs) // cfg["tasks"])][: cfg["tasks"]]
    lm = smollm2(job.input.package)
    write_json(
        job.output.replies, {"planner": "smollm2", "model_sha256": lm.sha256, "replies": replies_for(lm, specs, cfg)}
    )
