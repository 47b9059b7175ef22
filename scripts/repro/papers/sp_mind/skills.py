"""SP-Mind's skills: the analysis tools the agent calls (numpy / scipy code path), each with a doc.

Every skill takes the cell table (and the gates / workflow where it needs them) plus keyword parameters,
and returns a plain value (number, label or list). Defaults are the ones a hurried analyst would use, which
is where the realistic failure modes live: ``gate`` and ``phenotype`` default to gating raw intensities
although the shipped gates are on the log1p scale, ``normalize`` defaults to log1p where a task may ask for
arcsinh, and the neighbourhood skills take a radius in pixels. The verify step catches what these produce.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree


@dataclass
class Data:
    """The cell table, gates and workflow a skill reads; phenotype labels are computed once per scale."""

    cells: pd.DataFrame
    gates: pd.DataFrame
    workflow: pd.DataFrame
    _labels: dict = field(default_factory=dict)
    memo: dict = field(default_factory=dict)

    def labels(self, scale: str) -> np.ndarray:
        if scale not in self._labels:
            self._labels[scale] = phenotype_labels(self.cells, self.gates, self.workflow, scale)
        return self._labels[scale]


@dataclass(frozen=True)
class Skill:
    name: str
    doc: str
    run: Callable
    params: tuple[str, ...] = ()
    alternatives: dict = field(default_factory=dict)  # parameter -> values the revise step may try


def transform(values: np.ndarray, scale: str, cofactor: float = 5.0) -> np.ndarray:
    if scale == "raw":
        return values
    if scale == "log1p":
        return np.log1p(values)
    if scale == "arcsinh":
        return np.arcsinh(values / cofactor)
    raise ValueError(f"unknown scale {scale!r}")


def _gate(gates: pd.DataFrame, marker: str) -> float:
    return float(gates.loc[gates.marker == marker, "gate"].iloc[0])


def rescale(values: np.ndarray, gate: float) -> np.ndarray:
    """scimap's rescaling: [min, gate] -> [0, 0.5] and [gate, max] -> [0.5, 1], linearly on each side."""
    lo, hi = float(np.min(values)), float(np.max(values))
    below = 0.5 * (values - lo) / (gate - lo) if gate > lo else np.zeros_like(values)
    above = 0.5 + 0.5 * (values - gate) / (hi - gate) if hi > gate else np.ones_like(values)
    return np.clip(np.where(values < gate, below, above), 0.0, 1.0)


def positive(cells: pd.DataFrame, gates: pd.DataFrame, marker: str, scale: str = "raw") -> np.ndarray:
    """Cells at or above the marker's gate, comparing intensities on ``scale`` with the gate as stored."""
    gate = _gate(gates, marker)
    return transform(cells[marker].to_numpy(float), scale) >= gate


def count_cells(data: Data, roi: str | None = None, min_area: float | None = None) -> int:
    keep = np.ones(len(data.cells), bool)
    if roi:
        keep &= data.cells["roi"].to_numpy() == roi
    if min_area is not None:
        keep &= data.cells["Area"].to_numpy() > min_area
    return int(keep.sum())


def gate(data: Data, marker: str, scale: str = "raw", roi: str | None = None) -> float:
    """Fraction of cells positive for ``marker`` (optionally within ``roi``)."""
    pos = positive(data.cells, data.gates, marker, scale)
    if roi:
        pos = pos[data.cells["roi"].to_numpy() == roi]
    return float(np.mean(pos)) if pos.size else float("nan")


def _rule_holds(pos: dict[str, np.ndarray], rules: list[tuple[str, str]], n: int) -> np.ndarray:
    ok = np.ones(n, bool)
    groups: dict[str, list[str]] = {}
    for marker, rule in rules:
        groups.setdefault(rule, []).append(marker)
    for rule, markers in groups.items():
        stack = np.stack([pos[m] for m in markers])
        if rule in ("pos", "allpos"):
            ok &= stack.all(0)
        elif rule in ("neg", "allneg"):
            ok &= ~stack.any(0)
        elif rule == "anypos":
            ok &= stack.any(0)
        elif rule == "anyneg":
            ok &= ~stack.all(0)
    return ok


def phenotype_labels(
    cells: pd.DataFrame, gates: pd.DataFrame, workflow: pd.DataFrame, scale: str = "raw"
) -> np.ndarray:
    """Hierarchical gating: children of a parent whose rules hold; ties go to the child with the highest
    rescaled intensity among its positive markers (scimap's rule); cells matching no top-level rule are ``Unknown``, deeper ones keep their
    parent's label."""
    n = len(cells)
    markers = sorted(set(workflow["marker"]))
    level = {m: rescale(transform(cells[m].to_numpy(float), scale), _gate(gates, m)) for m in markers}
    pos = {m: level[m] >= 0.5 for m in markers}
    labels = np.full(n, "all", dtype=object)
    frontier = ["all"]
    while frontier:
        parent = frontier.pop(0)
        children = workflow[workflow.parent == parent]
        members = labels == parent
        names = list(dict.fromkeys(children["phenotype"]))
        if not names:
            continue
        scores = np.full((len(names), n), -np.inf)
        for k, name in enumerate(names):
            rules = list(
                children.loc[children.phenotype == name, ["marker", "rule"]].itertuples(index=False, name=None)
            )
            holds = _rule_holds(pos, rules, n)
            lifts = [level[m] for m, r in rules if r in ("pos", "allpos", "anypos")]
            score = np.max(np.stack(lifts), 0) if lifts else np.zeros(n)
            scores[k] = np.where(holds, score, -np.inf)
        best = scores.argmax(0)
        matched = np.isfinite(scores.max(0)) & members
        labels[matched] = np.array(names, dtype=object)[best[matched]]
        if parent == "all":
            labels[members & ~matched] = "Unknown"
        frontier += names
    return labels.astype(str)


def phenotype_count(data: Data, phenotype: str, scale: str = "raw", roi: str | None = None) -> int:
    labels = data.labels(scale)
    keep = labels == phenotype
    if roi:
        keep &= data.cells["roi"].to_numpy() == roi
    return int(keep.sum())


def phenotype_fraction(data: Data, phenotype: str, scale: str = "raw", roi: str | None = None) -> float:
    labels = data.labels(scale)
    inside = data.cells["roi"].to_numpy() == roi if roi else np.ones(len(data.cells), bool)
    return float(np.mean(labels[inside] == phenotype)) if inside.any() else float("nan")


def mean_intensity(data: Data, marker: str, scale: str = "log1p", cofactor: float = 5.0) -> float:
    """Mean of the marker's intensity after the ``scale`` transform (arcsinh with ``cofactor``)."""
    return float(np.mean(transform(data.cells[marker].to_numpy(float), scale, cofactor)))


def top_correlated(data: Data, marker: str, scale: str = "log1p") -> str:
    """The other marker with the largest Pearson correlation with ``marker`` on the ``scale`` transform."""
    names = list(data.gates["marker"])
    values = np.stack([transform(data.cells[m].to_numpy(float), scale) for m in names], 1)
    corr = np.corrcoef(values, rowvar=False)[names.index(marker)]
    corr[names.index(marker)] = -np.inf
    return names[int(np.argmax(corr))]


def _coords(cells: pd.DataFrame) -> np.ndarray:
    return cells[["x", "y"]].to_numpy(float)


def neighbour_fraction(data: Data, source: str, target: str, radius: float = 30.0, scale: str = "raw") -> float:
    """Of all neighbours within ``radius`` px of ``source`` cells, the fraction that are ``target`` cells."""
    labels = data.labels(scale)
    tree = cKDTree(_coords(data.cells))
    idx = np.flatnonzero(labels == source)
    if idx.size == 0:
        return float("nan")
    hits = tree.query_ball_point(_coords(data.cells)[idx], r=radius)
    neigh = np.concatenate([np.array([j for j in h if j != i], dtype=int) for i, h in zip(idx, hits)])
    return float(np.mean(labels[neigh] == target)) if neigh.size else float("nan")


def nearest_distance(data: Data, source: str, target: str, scale: str = "raw") -> float:
    """Median distance (px) from each ``source`` cell to its nearest ``target`` cell."""
    labels = data.labels(scale)
    xy = _coords(data.cells)
    src, tgt = xy[labels == source], xy[labels == target]
    if len(src) == 0 or len(tgt) == 0:
        return float("nan")
    return float(np.median(cKDTree(tgt).query(src, k=2 if source == target else 1)[0].reshape(len(src), -1)[:, -1]))


def interaction(
    data: Data,
    source: str,
    target: str,
    radius: float = 30.0,
    permutations: int = 100,
    seed: int = 0,
    scale: str = "raw",
) -> str:
    """Permutation test of ``source``-``target`` contacts within ``radius``: labels shuffled (seeded); returns
    ``enriched`` / ``depleted`` (two-sided p < 0.05) or ``none``."""
    labels = data.labels(scale)
    pairs = cKDTree(_coords(data.cells)).query_pairs(r=radius, output_type="ndarray")
    a, b = pairs[:, 0], pairs[:, 1]

    def contacts(lab: np.ndarray) -> int:
        return int(np.sum(((lab[a] == source) & (lab[b] == target)) | ((lab[a] == target) & (lab[b] == source))))

    observed = contacts(labels)
    rng = np.random.default_rng(seed)
    null = np.array([contacts(rng.permutation(labels)) for _ in range(permutations)])
    high = (1 + np.sum(null >= observed)) / (permutations + 1)
    low = (1 + np.sum(null <= observed)) / (permutations + 1)
    if min(high, low) * 2 >= 0.05:
        return "none"
    return "enriched" if high < low else "depleted"


SKILLS = {
    s.name: s
    for s in [
        Skill(
            "count_cells",
            "Count cells, optionally inside an ROI or above a minimum area (QC filtering).",
            count_cells,
            ("roi", "min_area"),
        ),
        Skill(
            "gate",
            "Fraction of cells positive for one marker by its manual gate (gating). Gates are on the log1p scale.",
            gate,
            ("marker", "roi", "scale"),
            {"scale": ["log1p", "arcsinh"]},
        ),
        Skill(
            "phenotype_count",
            "Number of cells of a phenotype from the hierarchical gating workflow (phenotyping).",
            phenotype_count,
            ("phenotype", "roi", "scale"),
            {"scale": ["log1p"]},
        ),
        Skill(
            "phenotype_fraction",
            "Fraction of cells (optionally in an ROI) of a phenotype: cell-type composition, proportion.",
            phenotype_fraction,
            ("phenotype", "roi", "scale"),
            {"scale": ["log1p"]},
        ),
        Skill(
            "mean_intensity",
            "Mean marker intensity after normalization: log1p or arcsinh with a cofactor (normalization).",
            mean_intensity,
            ("marker", "scale", "cofactor"),
        ),
        Skill(
            "top_correlated",
            "The marker most correlated with a given marker (marker co-expression, correlation).",
            top_correlated,
            ("marker",),
        ),
        Skill(
            "neighbour_fraction",
            "Spatial neighbourhood composition: share of neighbours within a radius that are of a cell type.",
            neighbour_fraction,
            ("source", "target", "radius", "scale"),
            {"scale": ["log1p"]},
        ),
        Skill(
            "nearest_distance",
            "Median distance from cells of one type to the nearest cell of another type (proximity).",
            nearest_distance,
            ("source", "target", "scale"),
            {"scale": ["log1p"]},
        ),
        Skill(
            "interaction",
            "Cell-cell interaction statistics: permutation test whether two types touch more (enriched) or less (depleted) than chance.",
            interaction,
            ("source", "target", "radius", "scale"),
            {"scale": ["log1p"]},
        ),
    ]
}
