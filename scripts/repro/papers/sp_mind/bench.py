"""SP-Bench-mini: task specs over the CyCIF exemplar, reference answers and deterministic graders.

A task is a JSON spec (``id``, ``category``, ``prompt``, ``inputs``, ``answer_type``, ``grader``, ``tolerance``)
plus the reference plan (skill and parameters) whose result is the ground truth. The reference solver runs
the reference plans with the correct settings (gates applied on their log1p scale). Graders compare an
answer with the reference only: numeric within a relative tolerance, or exact label.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from repro.workflow.io import InputError

LOG = {"scale": "log1p"}
# (category, prompt, skill, params, answer_type); prompts name every parameter the answer depends on.
TASKS = [
    ("qc", "How many cells are in the sample?", "count_cells", {}, "count"),
    ("qc", "How many cells lie in ROI1?", "count_cells", {"roi": "ROI1"}, "count"),
    ("qc", "How many cells are inside ROI2?", "count_cells", {"roi": "ROI2"}, "count"),
    (
        "qc",
        "After filtering out small segments, how many cells have an area above 300 pixels?",
        "count_cells",
        {"min_area": 300.0},
        "count",
    ),
    (
        "gating",
        "What fraction of cells are CD45 positive by the manual gates?",
        "gate",
        {"marker": "CD45"} | LOG,
        "fraction",
    ),
    ("gating", "What fraction of cells are positive for ECAD?", "gate", {"marker": "ECAD"} | LOG, "fraction"),
    ("gating", "Gate SMA: what share of cells is SMA positive?", "gate", {"marker": "SMA"} | LOG, "fraction"),
    (
        "gating",
        "What proportion of cells in ROI2 are FOXP3 positive?",
        "gate",
        {"marker": "FOXP3", "roi": "ROI2"} | LOG,
        "fraction",
    ),
    ("gating", "Using the gates, what fraction of cells express CD16?", "gate", {"marker": "CD16"} | LOG, "fraction"),
    (
        "phenotyping",
        "How many Treg cells are there after phenotyping with the gating workflow?",
        "phenotype_count",
        {"phenotype": "Treg"} | LOG,
        "count",
    ),
    (
        "phenotyping",
        "Count the NK cells identified by the phenotype workflow.",
        "phenotype_count",
        {"phenotype": "NK cells"} | LOG,
        "count",
    ),
    (
        "phenotyping",
        "How many ECAD+ cells does the hierarchical phenotyping give?",
        "phenotype_count",
        {"phenotype": "ECAD+"} | LOG,
        "count",
    ),
    (
        "phenotyping",
        "How many Dendritic cells are in ROI1 after phenotyping?",
        "phenotype_count",
        {"phenotype": "Dendritic cells", "roi": "ROI1"} | LOG,
        "count",
    ),
    (
        "composition",
        "What fraction of the cells in ROI1 are Immune cells?",
        "phenotype_fraction",
        {"phenotype": "Immune", "roi": "ROI1"} | LOG,
        "fraction",
    ),
    (
        "composition",
        "What proportion of cells in ROI2 are ECAD+ cells?",
        "phenotype_fraction",
        {"phenotype": "ECAD+", "roi": "ROI2"} | LOG,
        "fraction",
    ),
    (
        "composition",
        "What is the share of SMA+ cells in the whole tissue (cell-type composition)?",
        "phenotype_fraction",
        {"phenotype": "SMA+"} | LOG,
        "fraction",
    ),
    (
        "normalization",
        "What is the mean CD45 intensity after arcsinh normalization with cofactor 150?",
        "mean_intensity",
        {"marker": "CD45", "scale": "arcsinh", "cofactor": 150.0},
        "value",
    ),
    (
        "normalization",
        "What is the mean log1p-normalized ECAD intensity?",
        "mean_intensity",
        {"marker": "ECAD", "scale": "log1p"},
        "value",
    ),
    (
        "normalization",
        "Normalize SMA with arcsinh (cofactor 5): what is its mean?",
        "mean_intensity",
        {"marker": "SMA", "scale": "arcsinh", "cofactor": 5.0},
        "value",
    ),
    ("correlation", "Which marker is most correlated with CD45?", "top_correlated", {"marker": "CD45"}, "label"),
    (
        "correlation",
        "Which marker co-expresses most strongly with ECAD?",
        "top_correlated",
        {"marker": "ECAD"},
        "label",
    ),
    (
        "correlation",
        "Which marker has the highest correlation with CD16?",
        "top_correlated",
        {"marker": "CD16"},
        "label",
    ),
    (
        "neighbourhood",
        "Within 30 pixels of Treg cells, what fraction of neighbouring cells are Immune cells?",
        "neighbour_fraction",
        {"source": "Treg", "target": "Immune", "radius": 30.0} | LOG,
        "fraction",
    ),
    (
        "neighbourhood",
        "What fraction of the neighbours within 30 pixels of ECAD+ cells are ECAD+ cells (neighbourhood composition)?",
        "neighbour_fraction",
        {"source": "ECAD+", "target": "ECAD+", "radius": 30.0} | LOG,
        "fraction",
    ),
    (
        "neighbourhood",
        "Among neighbours within 50 pixels of SMA+ cells, what share are Immune cells?",
        "neighbour_fraction",
        {"source": "SMA+", "target": "Immune", "radius": 50.0} | LOG,
        "fraction",
    ),
    (
        "proximity",
        "What is the median distance from Treg cells to the nearest ECAD+ cell?",
        "nearest_distance",
        {"source": "Treg", "target": "ECAD+"} | LOG,
        "distance",
    ),
    (
        "proximity",
        "What is the median distance from Immune cells to their nearest SMA+ cell?",
        "nearest_distance",
        {"source": "Immune", "target": "SMA+"} | LOG,
        "distance",
    ),
    (
        "proximity",
        "How far are NK cells from the nearest Immune cell (median distance)?",
        "nearest_distance",
        {"source": "NK cells", "target": "Immune"} | LOG,
        "distance",
    ),
    (
        "interaction",
        "Is the interaction between Treg and ECAD+ cells within 30 pixels enriched, depleted or neither?",
        "interaction",
        {"source": "Treg", "target": "ECAD+", "radius": 30.0} | LOG,
        "label",
    ),
    (
        "interaction",
        "Do Immune cells interact with Immune cells within 30 pixels more than chance (enriched, depleted or none)?",
        "interaction",
        {"source": "Immune", "target": "Immune", "radius": 30.0} | LOG,
        "label",
    ),
    (
        "interaction",
        "Cell-cell interaction test of SMA+ and ECAD+ cells within 30 pixels: enriched, depleted or none?",
        "interaction",
        {"source": "SMA+", "target": "ECAD+", "radius": 30.0} | LOG,
        "label",
    ),
    (
        "interaction",
        "Are NK cells and Immune cells within 30 pixels enriched, depleted or neither in contact?",
        "interaction",
        {"source": "NK cells", "target": "Immune", "radius": 30.0} | LOG,
        "label",
    ),
]
TOLERANCE = {"count": 0.0, "fraction": 1e-6, "value": 1e-6, "distance": 1e-6, "label": None}


def task_specs(seed: int, permutations: int) -> list[dict]:
    """The task specs with their reference plans; permutation tests get the bench's seed and count."""
    specs = []
    for i, (category, prompt, skill, params, answer_type) in enumerate(TASKS):
        if skill == "interaction":
            params = params | {"seed": seed, "permutations": permutations}
        specs.append(
            {
                "id": f"sp{i:03d}",
                "category": category,
                "prompt": prompt,
                "inputs": ["cells", "gates", "workflow"],
                "answer_type": answer_type,
                "grader": "label" if answer_type == "label" else "numeric",
                "tolerance": TOLERANCE[answer_type],
                "reference": {"skill": skill, "params": params},
            }
        )
    return specs


def grade(spec: dict, answer) -> bool:
    """Deterministic verdict of ``answer`` against ``spec['expected']``."""
    expected = spec["expected"]
    if answer is None:
        return False
    if spec["grader"] == "label":
        return str(answer) == str(expected)
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return False
    if not math.isfinite(value):
        return False
    return abs(value - float(expected)) <= spec["tolerance"] * max(abs(float(expected)), 1.0)


def read_tasks(path: str | Path) -> list[dict]:
    """A task-set JSON (list of specs with ``expected``), the bench's own or a full SP-Bench export in the same
    layout; missing fields and unknown graders are named."""
    path = Path(path)
    try:
        specs = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise InputError(path, f"cannot read the task set ({err})") from err
    if not isinstance(specs, list) or not specs:
        raise InputError(path, "needs a non-empty list of task specs")
    need = ("id", "category", "prompt", "answer_type", "grader", "tolerance", "expected")
    for spec in specs:
        missing = [k for k in need if k not in spec]
        if missing:
            raise InputError(path, f"task {spec.get('id', '?')!r} lacks {missing}")
        if spec["grader"] not in ("numeric", "label"):
            raise InputError(path, f"task {spec['id']!r}: unknown grader {spec['grader']!r}")
    return specs
