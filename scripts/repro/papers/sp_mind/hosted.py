"""A hosted LLM planner with the user's own key: an OpenAI-compatible chat endpoint, never used in tests.

``SP_MIND_API_URL`` (e.g. https://api.openai.com/v1/chat/completions), ``SP_MIND_API_KEY`` and
``SP_MIND_MODEL`` come from the user's environment; nothing secret is stored. ``python -m
repro.papers.sp_mind.hosted tasks.json replies.json`` writes a replies file that the evaluate stage reads
like the SmolLM2 one.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request

from repro.papers.sp_mind.bench import read_tasks
from repro.papers.sp_mind.planners import llm_prompt
from repro.workflow.io import write_json


def ask(prompt: str, url: str, key: str, model: str) -> str:
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0}).encode()
    request = urllib.request.Request(url, body, {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]


def main(tasks: str, out: str) -> None:
    url, key = os.environ.get("SP_MIND_API_URL"), os.environ.get("SP_MIND_API_KEY")
    if not url or not key:
        raise SystemExit("set SP_MIND_API_URL and SP_MIND_API_KEY (your own key) to use a hosted planner")
    model = os.environ.get("SP_MIND_MODEL", "gpt-4o-mini")
    replies = {s["id"]: ask(llm_prompt(s["prompt"]), url, key, model) for s in read_tasks(tasks)}
    write_json(out, {"planner": "hosted", "model": model, "replies": replies})


if __name__ == "__main__":
    main(*sys.argv[1:3])
