"""Planners: natural-language query -> ranked tool plan (skill + parameters).

All planners share one argument extractor (markers, phenotypes, ROI, radius, area, normalization named in
the query); they differ in how they rank the skills:
- ``rule``: hand-written keyword rules (the deterministic planner of the brief);
- ``retrieval``: TF-IDF similarity between the query and each skill's name and doc (``docs=False`` is the
  ablation without skills docs: names only);
- ``random``: a seeded random order (the random-tool baseline);
- ``llm``: a language model picks the skill from the listed skills (SmolLM2 offline, cached generations, or a
  hosted model with the user's own key); the rest of the ranking falls back to retrieval.
"""

from __future__ import annotations

import re

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from repro.papers.sp_mind.skills import SKILLS

MARKERS = ("ELANE", "CD57", "CD45", "CD11B", "SMA", "CD16", "ECAD", "FOXP3", "NCAM")
PHENOTYPES = ("Other myeloid cells", "Dendritic cells", "NK cells", "ECAD+", "SMA+", "Immune", "Treg")
RULES = [
    (r"interact|enriched|depleted", "interaction"),
    (r"distance|how far", "nearest_distance"),
    (r"neighbo", "neighbour_fraction"),
    (r"correlat|co-express", "top_correlated"),
    (r"normali[sz]|arcsinh|log1p", "mean_intensity"),
    (r"phenotyp|identified|count the", "phenotype_count"),
    (r"fraction|share|proportion", "phenotype_fraction"),
    (r"positive|gate|express", "gate"),
    (r"how many|count", "count_cells"),
]


def extract_arguments(query: str) -> dict:
    """Every parameter a skill could need, read from the query's words (first match wins per slot)."""
    args: dict = {}
    text = query
    phenos = []
    for p in PHENOTYPES:
        for m in re.finditer(re.escape(p), text):
            phenos.append((m.start(), p))
        text = text.replace(p, " " * len(p))
    phenos = [p for _, p in sorted(phenos)]
    if phenos:
        args["phenotype"] = args["source"] = phenos[0]
        args["target"] = phenos[1] if len(phenos) > 1 else phenos[0]
    markers = [m for m in MARKERS if re.search(rf"\b{m}\b", text)]
    if markers:
        args["marker"] = markers[0]
    roi = re.search(r"\bROI\d+\b", query)
    if roi:
        args["roi"] = roi.group(0)
    radius = re.search(r"within (\d+(?:\.\d+)?) pixels", query)
    if radius:
        args["radius"] = float(radius.group(1))
    area = re.search(r"area above (\d+(?:\.\d+)?)", query)
    if area:
        args["min_area"] = float(area.group(1))
    if "arcsinh" in query:
        args["scale"] = "arcsinh"
        cof = re.search(r"cofactor (\d+(?:\.\d+)?)", query)
        if cof:
            args["cofactor"] = float(cof.group(1))
    elif "log1p" in query:
        args["scale"] = "log1p"
    return args


def plan_for(skill: str, args: dict, extra: dict | None = None) -> dict:
    """The call of ``skill`` with the extracted arguments it accepts."""
    params = {
        k: v for k, v in args.items() if k in SKILLS[skill].params or k == "cofactor" and skill == "mean_intensity"
    }
    return {"skill": skill, "params": params | (extra or {})}


class Planner:
    name = "planner"

    def rank(self, query: str, task_id: str) -> list[str]:
        raise NotImplementedError

    def plan(self, query: str, task_id: str, extra: dict | None = None) -> list[dict]:
        args = extract_arguments(query)
        return [plan_for(s, args, extra if s == "interaction" else None) for s in self.rank(query, task_id)]


class RulePlanner(Planner):
    name = "rule"

    def rank(self, query: str, task_id: str) -> list[str]:
        first = [skill for pattern, skill in RULES if re.search(pattern, query, re.I)]
        return list(dict.fromkeys(first + list(SKILLS)))


def skill_text(name: str, docs: bool) -> str:
    words = name.replace("_", " ")
    return f"{words} {SKILLS[name].doc}" if docs else words


class RetrievalPlanner(Planner):
    def __init__(self, docs: bool = True) -> None:
        self.docs = docs
        self.name = "retrieval" if docs else "retrieval_no_docs"
        self.names = list(SKILLS)
        self.vectorizer = TfidfVectorizer(ngram_range=(1, 1), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b")
        self.matrix = self.vectorizer.fit_transform([skill_text(n, docs) for n in self.names])

    def scores(self, query: str) -> np.ndarray:
        return (self.matrix @ self.vectorizer.transform([query]).T).toarray()[:, 0]

    def rank(self, query: str, task_id: str) -> list[str]:
        return [self.names[i] for i in np.argsort(-self.scores(query), kind="stable")]


class RandomPlanner(Planner):
    name = "random"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def rank(self, query: str, task_id: str) -> list[str]:
        rng = np.random.default_rng([self.seed, int(task_id.lstrip("sp"))])
        return [list(SKILLS)[i] for i in rng.permutation(len(SKILLS))]


def llm_prompt(query: str, docs: bool = True) -> str:
    """The planning prompt: the skills (with their docs unless ablated) and the query; answer = a skill name."""
    lines = [f"- {n}: {SKILLS[n].doc}" if docs else f"- {n}" for n in SKILLS]
    return (
        "You analyse a spatial proteomics cell table with these tools:\n"
        + "\n".join(lines)
        + f"\n\nQuestion: {query}\nReply with the name of the one tool to call first, nothing else."
    )


def parse_skill(text: str) -> str | None:
    """The first skill name in a model's reply (names may be written with spaces)."""
    found = [(text.find(n), n) for n in SKILLS if n in text] + [
        (text.find(n.replace("_", " ")), n) for n in SKILLS if n.replace("_", " ") in text
    ]
    return min(found)[1] if found else None


class LLMPlanner(Planner):
    """Ranks the model's chosen skill first, then the retrieval order; ``replies`` maps task id -> reply text."""

    def __init__(self, name: str, replies: dict[str, str]) -> None:
        self.name, self.replies, self.fallback = name, replies, RetrievalPlanner(docs=True)

    def rank(self, query: str, task_id: str) -> list[str]:
        chosen = parse_skill(self.replies.get(task_id, ""))
        rest = self.fallback.rank(query, task_id)
        return [chosen] + [s for s in rest if s != chosen] if chosen else rest
