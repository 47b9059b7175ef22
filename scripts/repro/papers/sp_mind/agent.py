"""The agent loop: plan -> run a tool -> verify the result -> revise parameters or the tool -> answer.

Verification never sees the reference answer. It checks the result against the task's answer schema
(type, range: a count is an integer in [0, cells], a fraction lies in [0, 1], a distance is finite and
non-negative, a label is one of the allowed ones) and runs sanity tests on intermediate results: every gate
the call applies must split the cells (between 1% and 99% positive on the scale used;
these bounds were set after looking at the shares: every shipped gate gives 1.3-53% on its log1p scale), which catches
gates applied on the wrong scale. A failed check revises the call's parameters from the skill's declared
alternatives first, then moves to the planner's next tool. Without verification the first result is the
answer.
"""

from __future__ import annotations

import math

import numpy as np

from repro.papers.sp_mind.planners import MARKERS, Planner
from repro.papers.sp_mind.skills import SKILLS, Data, positive

LABELS = {"interaction": {"enriched", "depleted", "none"}, "top_correlated": set(MARKERS)}
GATED = {"gate", "phenotype_count", "phenotype_fraction", "neighbour_fraction", "nearest_distance", "interaction"}


def schema_problems(answer_type: str, skill: str, result, n_cells: int) -> list[str]:
    if result is None:
        return ["no result"]
    if answer_type == "label":
        return [] if isinstance(result, str) and result in LABELS.get(skill, {result}) else ["not an allowed label"]
    if isinstance(result, str):
        return ["a label where a number was expected"]
    value = float(result)
    if not math.isfinite(value):
        return ["not finite"]
    if answer_type == "count" and not (float(value).is_integer() and 0 <= value <= n_cells):
        return ["count out of range"]
    if answer_type == "fraction" and not 0.0 <= value <= 1.0:
        return ["fraction out of [0, 1]"]
    if answer_type in ("distance", "value") and value < 0:
        return ["negative"]
    return []


def gate_problems(data: Data, skill: str, params: dict) -> list[str]:
    """Each gate the call applies must split the cells on the scale it uses."""
    if skill not in GATED:
        return []
    scale = params.get("scale", "raw")
    markers = [params["marker"]] if skill == "gate" else sorted(set(data.workflow["marker"]))
    out = []
    for marker in markers:
        share = float(np.mean(positive(data.cells, data.gates, marker, scale)))
        if not 0.01 < share < 0.99:
            out.append(f"gate of {marker} puts {share:.1%} of cells positive on scale {scale}")
    return out


def call(data: Data, skill: str, params: dict):
    """Run a tool; results are memoised on ``data`` by (skill, parameters): tools are deterministic, so runs
    of several planners over the same tasks compute each distinct call once."""
    key = (skill, tuple(sorted(params.items())))
    if key not in data.memo:
        try:
            data.memo[key] = SKILLS[skill].run(data, **params), None
        except (TypeError, ValueError, KeyError, IndexError) as err:
            data.memo[key] = None, f"{type(err).__name__}: {err}"
    return data.memo[key]


def solve(data: Data, planner: Planner, spec: dict, verify: bool, max_attempts: int) -> dict:
    """Run one task; returns the answer, the tool calls made and the checks that failed on the way."""
    extra = {k: v for k, v in spec.get("reference", {}).get("params", {}).items() if k in ("seed", "permutations")}
    plans = planner.plan(spec["prompt"], spec["id"], extra)
    calls, failures, answer = 0, [], None
    queue = list(plans)
    while queue and calls < max_attempts:
        step = queue.pop(0)
        result, error = call(data, step["skill"], step["params"])
        calls += 1
        answer = result
        if not verify:
            break
        problems = ([error] if error else []) + (
            schema_problems(spec["answer_type"], step["skill"], result, len(data.cells)) if not error else []
        )
        problems += gate_problems(data, step["skill"], step["params"]) if not error else []
        if not problems:
            break
        failures.append({"skill": step["skill"], "params": step["params"], "problems": problems})
        answer = None
        alternatives = SKILLS[step["skill"]].alternatives.get("scale", [])
        tried = step["params"].get("scale", "raw")
        if any("gate of" in p for p in problems) and alternatives:
            nxt = alternatives[alternatives.index(tried) + 1] if tried in alternatives else alternatives[0]
            if tried != alternatives[-1]:
                queue.insert(0, {"skill": step["skill"], "params": step["params"] | {"scale": nxt}})
    first = plans[0] if plans else {"skill": None, "params": {}}
    return {"answer": answer, "calls": calls, "failures": failures, "first_skill": first["skill"]}
