"""The agent's system prompt (with or without the skill docs) and the messages of its dialogues.

Both prompts describe the data the same way (cell count, markers, regions, phenotypes) and the call format;
only the docs prompt adds each tool's description and the note on the gates' recorded scale. The rows of one
prompt share its key/values (:class:`repro.data.language.fast.Prefix`), so a long docs prompt is read once.
"""

from __future__ import annotations

from repro.papers.sp_mind.skills import SKILLS, Data


def signature(name: str) -> str:
    params = ", ".join(p.name if p.required else f"{p.name}?" for p in SKILLS[name].params)
    return f"{name}({params})"


def system_prompt(data: Data, docs: bool) -> str:
    lines = [
        "You are SP-Mind, an agent that analyses spatial proteomics data.",
        f"Data: a CyCIF cell table of {len(data.cells)} cells; markers {', '.join(data.markers)}; regions ROI1, "
        f"ROI2 and Other; phenotypes of the gating workflow: {', '.join(data.phenotypes)}.",
    ]
    if docs:
        lines.append(
            f"The manual gates (one per marker) are on the {data.gate_scale} scale: tools that gate or phenotype "
            f"take scale={data.gate_scale}."
        )
    lines.append("Solve each task with one tool call, written Call: tool(name=value, ...). Tools:")
    for name, skill in SKILLS.items():
        lines.append(f"- {signature(name)}: {skill.doc}" if docs else f"- {signature(name)}")
    return "\n".join(lines)


def task_message(spec: dict) -> str:
    return f"Task: {spec['prompt']}\nAnswer type: {spec['answer_type']}."


def verifier_message(result: str, problems: list[str]) -> str:
    return f"Result: {result}\nVerifier: {'; '.join(problems)}. Revise the call."


def observation_message(result: str) -> str:
    return f"Observation: {result}\nCall again, or finish() to answer with it."
