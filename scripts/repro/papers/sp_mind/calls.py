"""Tool calls as the agent writes them, ``tool(name=value, ...)``: parsing, execution and the result text.

The constrained decoder only lets the model write calls of this form with values from each parameter's
domain, so parsing never fails on the model's text; a call can still be wrong (wrong tool, wrong or missing
argument, wrong scale), and then the skill raises or returns a wrong answer, as it would for an analyst.
"""

from __future__ import annotations

import math
import re

import numpy as np

from repro.papers.sp_mind.skills import SKILLS, Data

CALL = re.compile(r"^\s*(\w+)\((.*)\)\s*$", re.S)


def parse_call(text: str) -> dict:
    """``{"skill", "params"}`` from ``tool(a=1, b=log1p)``; ``finish()`` gives skill ``finish``."""
    found = CALL.match(text.split("Call:")[-1])
    if not found:
        raise ValueError(f"not a tool call: {text!r}")
    name, body = found.group(1), found.group(2).strip()
    params: dict = {}
    for part in filter(None, (p.strip() for p in body.split(", ")) if body else []):
        key, _, value = part.partition("=")
        kinds = {p.name: p.kind for p in SKILLS[name].params} if name in SKILLS else {}
        params[key.strip()] = int(value) if kinds.get(key.strip()) == "int" else value.strip()
    return {"skill": name, "params": params}


def call_text(call: dict) -> str:
    return f"{call['skill']}({', '.join(f'{k}={v}' for k, v in call['params'].items())})"


def execute(data: Data, call: dict, hidden: dict | None = None):
    """(result, error message or None); results are memoised on ``data`` by (skill, arguments)."""
    skill = SKILLS.get(call["skill"])
    if skill is None:
        return None, f"unknown tool {call['skill']!r}"
    extra = hidden if call["skill"] == "interaction" else {}
    key = (call["skill"], tuple(sorted(call["params"].items())), tuple(sorted((extra or {}).items())))
    if key not in data.memo:
        try:
            data.memo[key] = skill.run(data, **call["params"], **(extra or {})), None
        except (TypeError, ValueError, KeyError, IndexError) as err:
            data.memo[key] = None, str(err).split("\n")[0]
    return data.memo[key]


def result_text(result, error: str | None) -> str:
    """What the agent reads back: short, so that the dialogue stays cheap to run."""
    if error is not None:
        return f"error: {error}"
    if isinstance(result, np.ndarray):
        sizes = np.bincount(result)
        return f"{len(sizes)} clusters of sizes {', '.join(str(int(s)) for s in sizes)}"
    if isinstance(result, str):
        return result
    if isinstance(result, (int, np.integer)):
        return str(int(result))
    value = float(result)
    return "nan" if not math.isfinite(value) else f"{value:.4g}"
