"""SP-Mind's verify step: checks a call and its result against the task, never against the reference answer.

What it checks (each finding is one sentence the agent reads back):
- the call ran (a skill's error message is passed on);
- the result's type is the task's answer type (each skill declares what it returns) and a number is finite;
- coverage: every marker, phenotype, region, shape feature, number and intensity transform the task names
  is used by the call, and the call uses no marker, phenotype, region, feature or number the task does not
  name (the task text is read for the names the data holds; no threshold is involved);
- gating scale: a skill that applies the manual gates uses the scale the gates are recorded on
  (``gates.parquet``'s ``scale`` column: the pitfall the brief names, gates on a transformed scale).
"""

from __future__ import annotations

import math
import re

import numpy as np

from repro.papers.sp_mind.skills import FEATURES, REGIONS, SCALES, SKILLS, Data

ENTITY_KINDS = ("marker", "phenotype", "region", "feature", "int")


def entities(prompt: str, data: Data) -> dict[str, set]:
    """The names the task text uses, by kind: markers, phenotypes, regions, features, numbers, transforms."""
    text = prompt
    found: dict[str, set] = {k: set() for k in (*ENTITY_KINDS, "scale")}
    for name in sorted(data.phenotypes + ["Unknown"], key=len, reverse=True):
        if re.search(rf"(?<![\w+]){re.escape(name)}(?![\w+])", text):
            found["phenotype"].add(name)
            text = re.sub(rf"(?<![\w+]){re.escape(name)}(?![\w+])", " ", text)
    for name in REGIONS:
        if re.search(rf"\b{name}\b", text):
            found["region"].add(name)
            text = re.sub(rf"\b{name}\b", " ", text)
    found["marker"] = {m for m in data.markers if re.search(rf"(?<![\w+]){re.escape(m)}(?![\w+])", text)}
    found["feature"] = {f for f in FEATURES if re.search(rf"\b{f}\b", text)}
    found["scale"] = {s for s in SCALES if re.search(rf"\b{s}\b", text)}
    found["int"] = {int(n) for n in re.findall(r"(?<![\w.])(\d+)(?![\w.])", text)}
    return found


def used(call: dict) -> dict[str, set]:
    """The call's argument values by the kind of their parameter."""
    out: dict[str, set] = {k: set() for k in (*ENTITY_KINDS, "scale")}
    kinds = {p.name: p.kind for p in SKILLS[call["skill"]].params}
    for key, value in call["params"].items():
        if key in kinds:
            out[kinds[key]].add(value)
    return out


def finding(text: str, **exclusion) -> dict:
    """One finding: the sentence the agent reads and what it rules out for the revised call (a ``tool``, a
    ``value`` as (parameter kind, value), or an optional ``param`` that should not be written)."""
    return {"text": text} | exclusion


def findings(spec: dict, call: dict, result, error: str | None, data: Data) -> list[dict]:
    """The verifier's findings on one call (empty: the call is accepted)."""
    skill = SKILLS.get(call["skill"])
    if skill is None:
        return [finding(f"there is no tool {call['skill']}")]
    out = []
    if error is not None:
        out.append(finding(f"error: {error}"))
    if skill.returns != spec["answer_type"]:
        out.append(finding(f"{skill.name} returns a {skill.returns}, not a {spec['answer_type']}", tool=skill.name))
    elif error is None and skill.returns not in ("label", "clustering"):
        value = float(result) if not isinstance(result, (str, np.ndarray)) else float("nan")
        if not math.isfinite(value):
            out.append(finding("the result is not a number"))
    named, got = entities(spec["prompt"], data), used(call)
    kinds = {p.kind for p in skill.params}
    params_of = {}
    for p in skill.params:
        params_of.setdefault(p.kind, []).append(p)
    for kind in ENTITY_KINDS:
        for name in sorted(named[kind] - got[kind], key=str):
            extra = {} if kind in kinds else {"tool": skill.name}
            out.append(finding(f"{name} is missing", **extra))
        for name in sorted(got[kind] - named[kind], key=str):
            for p in params_of.get(kind, []):
                if call["params"].get(p.name) != name:
                    continue
                drop = {"param": p.name} if not p.required and not named[kind] else {}
                out.append(finding(f"{name} is not in the task", value=(kind, name), **drop))
    scale = call["params"].get("scale")
    for wanted in sorted(named["scale"]):
        if scale is not None and scale != wanted and not skill.gated:
            out.append(finding(f"the task asks for {wanted}, not {scale}", value=("scale", scale)))
    if skill.gated and scale is not None and scale != data.gate_scale:
        out.append(finding(f"the gates are on the {data.gate_scale} scale, not {scale}", value=("scale", scale)))
    return out
