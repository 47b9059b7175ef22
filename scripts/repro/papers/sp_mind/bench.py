"""SP-Bench-mini: task specs over the CyCIF exemplar in 18 categories, reference answers, deterministic graders.

A task is a JSON spec (``id``, ``category``, ``prompt``, ``inputs``, ``answer_type``, ``grader``, ``tolerance``)
plus the reference call (skill and arguments) whose result, computed by the skills' reference code with the
correct settings (gates applied on their recorded scale), is the expected answer. Each category has a
prompt template and a list of argument sets; ``tasks_per_category`` of them are used (the first ones), so
the smoke default runs one task per category and paper scale several. Prompts name every argument the
answer depends on except the gating scale, which the gates record (and the skill docs say). Graders compare
an answer with the reference only: numeric within a relative tolerance, exact label, or adjusted Rand index
at least ``ARI_PASS`` for a clustering.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError

ARI_PASS = 0.9  # declared with the grader (the brief: "ARI >= threshold for clustering tasks")
TOLERANCE = {"count": 0.0, "fraction": 1e-6, "value": 1e-6, "distance": 1e-6, "label": None, "clustering": ARI_PASS}
GRADER = {"label": "label", "clustering": "ari"}


def cells(phenotype: str) -> str:
    """'Treg cells', 'NK cells' (names that already end in 'cells' keep one)."""
    return phenotype if phenotype.endswith("cells") else f"{phenotype} cells"


# category -> (skill, answer type, prompt template, argument sets). Gated skills get the gates' scale.
CATEGORIES = {
    "qc": (
        "count_cells",
        "count",
        "After removing segments of {min_area} pixels or smaller, how many cells remain?",
        [{"min_area": v} for v in (300, 200, 100, 400, 150, 50)],
    ),
    "roi_count": (
        "count_cells",
        "count",
        "How many cells lie in {roi}?",
        [{"roi": "ROI1"}, {"roi": "ROI2"}, {"roi": "ROI1", "min_area": 200}, {"roi": "ROI2", "min_area": 100}],
    ),
    "morphology": (
        "morphology",
        "value",
        "What is the median {feature} of {phenotype_cells}?",
        [
            {"feature": f, "phenotype": p}
            for f, p in [
                ("Area", "Immune"),
                ("Eccentricity", "ECAD+"),
                ("Solidity", "SMA+"),
                ("Area", "Treg"),
                ("Extent", "NK cells"),
                ("MajorAxisLength", "Immune"),
            ]
        ],
    ),
    "normalization": (
        "mean_intensity",
        "value",
        "What is the mean {marker} intensity after arcsinh normalization with cofactor {cofactor}?",
        [{"marker": m, "scale": "arcsinh", "cofactor": c} for m, c in [("CD45", 150), ("SMA", 5), ("ECAD", 50)]]
        + [{"marker": m, "scale": "log1p"} for m in ("FOXP3", "CD57", "NCAM")],
    ),
    "gating": (
        "gate",
        "fraction",
        "What fraction of cells are {marker} positive by the manual gates?",
        [{"marker": m} for m in ("CD45", "ECAD", "SMA", "CD16", "FOXP3", "CD11B")],
    ),
    "co_expression": (
        "co_positive",
        "fraction",
        "What fraction of cells are positive for both {marker} and {marker2}?",
        [{"marker": a, "marker2": b} for a, b in [("CD45", "FOXP3"), ("CD45", "CD16"), ("ECAD", "SMA")]],
    ),
    "phenotyping": (
        "phenotype_count",
        "count",
        "How many {phenotype_cells} does the gating workflow identify?",
        [{"phenotype": p} for p in ("Treg", "NK cells", "ECAD+", "Dendritic cells", "SMA+", "Other myeloid cells")],
    ),
    "composition": (
        "phenotype_fraction",
        "fraction",
        "What fraction of the cells in {roi} are {phenotype_cells}?",
        [{"roi": r, "phenotype": p} for r, p in [("ROI1", "Immune"), ("ROI2", "ECAD+"), ("ROI1", "SMA+")]],
    ),
    "abundance": (
        "most_abundant",
        "label",
        "Which phenotype is the most abundant in {roi}?",
        [{"roi": r} for r in ("ROI1", "ROI2", "Other")],
    ),
    "differential": (
        "differential_marker",
        "label",
        "Which marker's mean log1p intensity differs most between {roi} and {roi2}?",
        [{"roi": a, "roi2": b, "scale": "log1p"} for a, b in [("ROI1", "ROI2"), ("ROI1", "Other"), ("ROI2", "Other")]],
    ),
    "correlation": (
        "top_correlated",
        "label",
        "Which marker is most correlated with {marker} on log1p intensities?",
        [{"marker": m, "scale": "log1p"} for m in ("CD45", "ECAD", "CD16", "SMA", "CD57", "FOXP3")],
    ),
    "clustering": (
        "kmeans",
        "clustering",
        "Cluster the cells into {k} groups by k-means on log1p intensities.",
        [{"k": k, "scale": "log1p"} for k in (4, 3, 6, 5)],
    ),
    "neighbourhood": (
        "neighbour_fraction",
        "fraction",
        "Within {radius} pixels of {source_cells}, what fraction of the neighbouring cells are {target_cells}?",
        [
            {"source": s, "target": t, "radius": r}
            for s, t, r in [("Treg", "Immune", 30), ("ECAD+", "ECAD+", 30), ("SMA+", "Immune", 50)]
        ],
    ),
    "proximity": (
        "nearest_distance",
        "distance",
        "What is the median distance from {source_cells} to the nearest {target} cell?",
        [{"source": s, "target": t} for s, t in [("Treg", "ECAD+"), ("Immune", "SMA+"), ("NK cells", "Immune")]],
    ),
    "interaction": (
        "interaction",
        "label",
        "Are contacts between {source_cells} and {target_cells} within {radius} pixels enriched, depleted or neither?",
        [
            {"source": s, "target": t, "radius": r}
            for s, t, r in [("Treg", "ECAD+", 30), ("Immune", "Immune", 30), ("SMA+", "ECAD+", 30)]
        ],
    ),
    "boundary": (
        "boundary_distance",
        "distance",
        "What is the median distance from the {phenotype_cells} in {roi} to the edge of the region?",
        [{"phenotype": p, "roi": r} for p, r in [("Immune", "ROI1"), ("ECAD+", "ROI2"), ("Immune", "ROI2")]],
    ),
    "autocorrelation": (
        "morans_i",
        "value",
        "What is Moran's I of the log1p {marker} intensity over the {k} nearest neighbours?",
        [{"marker": m, "k": k, "scale": "log1p"} for m, k in [("ECAD", 10), ("CD45", 10), ("SMA", 5)]],
    ),
    "density": (
        "density",
        "value",
        "How many {phenotype_cells} per 10k square pixels of its convex hull does {roi} hold?",
        [{"phenotype": p, "roi": r} for p, r in [("Immune", "ROI1"), ("ECAD+", "ROI2"), ("SMA+", "ROI1")]],
    ),
}


def prompt_of(template: str, args: dict) -> str:
    fields = dict(args)
    for key in ("phenotype", "source", "target"):
        if key in args:
            fields[f"{key}_cells"] = cells(args[key])
    text = template.format(**fields)
    if "roi" in args and "{roi}" not in template:
        text = text.rstrip("?") + f" in {args['roi']}?"
    if "min_area" in args and "{min_area}" not in template:
        text = text.rstrip("?") + f" after removing segments of {args['min_area']} pixels or smaller?"
    return text


def task_specs(tasks_per_category: int, gate_scale: str, seed: int, permutations: int) -> list[dict]:
    """The task specs with their reference calls, ``tasks_per_category`` per category (fewer where a
    category has fewer argument sets); permutation tests get the bench's seed and count."""
    from repro.papers.sp_mind.skills import SKILLS

    specs = []
    for category, (skill, answer_type, template, arg_sets) in CATEGORIES.items():
        for k, args in enumerate(arg_sets[:tasks_per_category]):
            params = dict(args)
            if SKILLS[skill].gated:
                params["scale"] = gate_scale
            hidden = {"seed": seed, "permutations": permutations} if skill == "interaction" else {}
            specs.append(
                {
                    "id": f"{category}_{k}",
                    "category": category,
                    "prompt": prompt_of(template, args),
                    "inputs": ["cells", "gates", "workflow"],
                    "answer_type": answer_type,
                    "grader": GRADER.get(answer_type, "numeric"),
                    "tolerance": TOLERANCE[answer_type],
                    "reference": {"skill": skill, "params": params, "hidden": hidden},
                }
            )
    return specs


def adjusted_rand(a: np.ndarray, b: np.ndarray) -> float:
    """Hubert and Arabie's adjusted Rand index of two labelings (1 for identical partitions)."""
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    table = np.zeros((ia.max() + 1, ib.max() + 1))
    np.add.at(table, (ia, ib), 1)

    def pairs(x: np.ndarray) -> float:
        return float(np.sum(x * (x - 1) / 2))

    index, rows, cols, total = pairs(table), pairs(table.sum(1)), pairs(table.sum(0)), len(a) * (len(a) - 1) / 2
    expected = rows * cols / total
    top = (rows + cols) / 2
    return 1.0 if top == expected else float((index - expected) / (top - expected))


def grade(spec: dict, answer) -> bool:
    """Deterministic verdict of ``answer`` against ``spec['expected']``."""
    expected = spec["expected"]
    if answer is None:
        return False
    if spec["grader"] == "label":
        return str(answer) == str(expected)
    if spec["grader"] == "ari":
        got, want = np.asarray(answer), np.asarray(expected)
        return got.shape == want.shape and adjusted_rand(got, want) >= spec["tolerance"]
    if isinstance(answer, (str, np.ndarray, list)):
        return False
    value = float(answer)
    if not math.isfinite(value):
        return False
    return abs(value - float(expected)) <= spec["tolerance"] * max(abs(float(expected)), 1.0)


def read_tasks(path: str | Path) -> list[dict]:
    """A task-set JSON (list of specs with ``expected`` and a ``reference`` call), the bench's own or a larger
    set in the same layout; missing fields and unknown graders or skills are named."""
    from repro.papers.sp_mind.skills import SKILLS

    path = Path(path)
    try:
        specs = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise InputError(path, f"cannot read the task set ({err})") from err
    if not isinstance(specs, list) or not specs:
        raise InputError(path, "needs a non-empty list of task specs")
    need = ("id", "category", "prompt", "answer_type", "grader", "tolerance", "expected", "reference")
    for spec in specs:
        missing = [k for k in need if k not in spec]
        if missing:
            raise InputError(path, f"task {spec.get('id', '?')!r} lacks {missing}")
        if spec["grader"] not in ("numeric", "label", "ari"):
            raise InputError(path, f"task {spec['id']!r}: unknown grader {spec['grader']!r}")
        if spec["reference"].get("skill") not in SKILLS:
            raise InputError(path, f"task {spec['id']!r}: unknown reference skill {spec['reference'].get('skill')!r}")
    if len({s["id"] for s in specs}) != len(specs):
        raise InputError(path, "task ids are not unique")
    return specs
