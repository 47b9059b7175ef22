"""SP-Mind's skills: the analysis tools the agent calls (numpy / scipy code path), each with its doc.

Every skill takes the cell table (and the gates / workflow where it needs them) and keyword arguments the
agent chooses; it returns a plain value (number, label, or cluster labels). Arguments the answer depends on
have no default: the agent must choose them (a gating scale, a marker, a radius). The only defaults are
neutral (no region = the whole tissue, no area filter) or documented (arcsinh cofactor 5). Each skill
declares its parameters with their kinds (the value domains the constrained decoder offers) and the type of
what it returns (which the verifier compares with the task's answer type).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.spatial import ConvexHull, cKDTree

SCALES = ("raw", "log1p", "arcsinh")
REGIONS = ("ROI1", "ROI2", "Other")
FEATURES = ("Area", "Eccentricity", "MajorAxisLength", "MinorAxisLength", "Solidity", "Extent")
LABELS = ("enriched", "depleted", "none")
MAX_RADIUS = 100  # px: neighbourhood radii beyond it are refused (a radius graph that large does not fit in memory)


@dataclass
class Data:
    """The cell table, gates and workflow a skill reads; phenotype labels are computed once per scale."""

    cells: pd.DataFrame
    gates: pd.DataFrame
    workflow: pd.DataFrame
    _labels: dict = field(default_factory=dict)
    memo: dict = field(default_factory=dict)

    def labels(self, scale: str) -> np.ndarray:
        if scale not in SCALES:
            raise ValueError(f"unknown scale {scale!r}")
        if scale not in self._labels:
            self._labels[scale] = phenotype_labels(self.cells, self.gates, self.workflow, scale)
        return self._labels[scale]

    @property
    def markers(self) -> list[str]:
        return list(self.gates["marker"])

    @property
    def phenotypes(self) -> list[str]:
        return list(dict.fromkeys(self.workflow["phenotype"]))

    @property
    def gate_scale(self) -> str:
        return str(self.gates["scale"].iloc[0])


def load_data(cells, gates, workflow) -> Data:
    """The canonical tables the data stage wrote (parquet), as :class:`Data`."""
    from repro.workflow.io import InputError

    try:
        return Data(pd.read_parquet(cells), pd.read_parquet(gates), pd.read_parquet(workflow))
    except (OSError, ValueError) as err:
        raise InputError(cells, f"cannot read the cell tables ({err})") from err


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # marker, phenotype, region, scale, feature, int
    required: bool = True


@dataclass(frozen=True)
class Skill:
    name: str
    doc: str
    run: Callable
    params: tuple[Param, ...]
    returns: str  # count, fraction, value, distance, label, clustering
    gated: bool = False  # its ``scale`` is the scale the manual gates are applied on


def transform(values: np.ndarray, scale: str, cofactor: float = 5.0) -> np.ndarray:
    if scale == "raw":
        return values
    if scale == "log1p":
        return np.log1p(values)
    if scale == "arcsinh":
        return np.arcsinh(values / cofactor)
    raise ValueError(f"unknown scale {scale!r}")


def _gate(gates: pd.DataFrame, marker: str) -> float:
    found = gates.loc[gates.marker == marker, "gate"]
    if found.empty:
        raise ValueError(f"no manual gate for marker {marker!r}")
    return float(found.iloc[0])


def rescale(values: np.ndarray, gate: float) -> np.ndarray:
    """scimap's rescaling: [min, gate] -> [0, 0.5] and [gate, max] -> [0.5, 1], linearly on each side."""
    lo, hi = float(np.min(values)), float(np.max(values))
    below = 0.5 * (values - lo) / (gate - lo) if gate > lo else np.zeros_like(values)
    above = 0.5 + 0.5 * (values - gate) / (hi - gate) if hi > gate else np.ones_like(values)
    return np.clip(np.where(values < gate, below, above), 0.0, 1.0)


def positive(cells: pd.DataFrame, gates: pd.DataFrame, marker: str, scale: str) -> np.ndarray:
    """Cells at or above the marker's gate, comparing intensities on ``scale`` with the gate as stored."""
    gate = _gate(gates, marker)
    return transform(cells[marker].to_numpy(float), scale) >= gate


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


def phenotype_labels(cells: pd.DataFrame, gates: pd.DataFrame, workflow: pd.DataFrame, scale: str) -> np.ndarray:
    """Hierarchical gating: children of a parent whose rules hold; ties go to the child with the highest
    rescaled intensity among its positive markers (scimap's rule); cells matching no top-level rule are
    ``Unknown``, deeper ones keep their parent's label."""
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


def _region(data: Data, roi: str | None) -> np.ndarray:
    if roi is None:
        return np.ones(len(data.cells), bool)
    if roi not in REGIONS:
        raise ValueError(f"unknown region {roi!r}")
    return data.cells["roi"].to_numpy() == roi


def _phenotype(data: Data, phenotype: str, scale: str) -> np.ndarray:
    if phenotype not in data.phenotypes + ["Unknown"]:
        raise ValueError(f"unknown phenotype {phenotype!r}")
    return data.labels(scale) == phenotype


def _coords(cells: pd.DataFrame) -> np.ndarray:
    return cells[["x", "y"]].to_numpy(float)


def _values(data: Data, marker: str, scale: str, cofactor: float = 5.0) -> np.ndarray:
    if marker not in data.markers:
        raise ValueError(f"unknown marker {marker!r}")
    return transform(data.cells[marker].to_numpy(float), scale, cofactor)


def _radius(radius: int) -> None:
    if not 0 < radius <= MAX_RADIUS:
        raise ValueError(f"radius must lie in (0, {MAX_RADIUS}] pixels")


def count_cells(data: Data, roi: str | None = None, min_area: int | None = None) -> int:
    keep = _region(data, roi)
    if min_area is not None:
        keep &= data.cells["Area"].to_numpy() > min_area
    return int(keep.sum())


def morphology(data: Data, feature: str, phenotype: str, scale: str) -> float:
    if feature not in FEATURES:
        raise ValueError(f"unknown morphology feature {feature!r}")
    sel = _phenotype(data, phenotype, scale)
    return float(np.median(data.cells[feature].to_numpy(float)[sel])) if sel.any() else float("nan")


def mean_intensity(data: Data, marker: str, scale: str, cofactor: int = 5) -> float:
    if cofactor <= 0:
        raise ValueError("cofactor must be positive")
    return float(np.mean(_values(data, marker, scale, float(cofactor))))


def gate(data: Data, marker: str, scale: str, roi: str | None = None) -> float:
    _values(data, marker, scale)
    pos = positive(data.cells, data.gates, marker, scale)[_region(data, roi)]
    return float(np.mean(pos)) if pos.size else float("nan")


def co_positive(data: Data, marker: str, marker2: str, scale: str) -> float:
    if marker == marker2:
        raise ValueError("co_positive needs two different markers")
    _values(data, marker, scale), _values(data, marker2, scale)
    both = positive(data.cells, data.gates, marker, scale) & positive(data.cells, data.gates, marker2, scale)
    return float(np.mean(both))


def phenotype_count(data: Data, phenotype: str, scale: str, roi: str | None = None) -> int:
    return int(np.sum(_phenotype(data, phenotype, scale) & _region(data, roi)))


def phenotype_fraction(data: Data, phenotype: str, scale: str, roi: str | None = None) -> float:
    inside = _region(data, roi)
    return float(np.mean(_phenotype(data, phenotype, scale)[inside])) if inside.any() else float("nan")


def most_abundant(data: Data, scale: str, roi: str | None = None) -> str:
    labels = data.labels(scale)[_region(data, roi)]
    labels = labels[labels != "Unknown"]
    if labels.size == 0:
        return "none"
    names, counts = np.unique(labels, return_counts=True)
    return str(names[int(np.argmax(counts))])


def differential_marker(data: Data, roi: str, roi2: str, scale: str) -> str:
    a, b = _region(data, roi), _region(data, roi2)
    if roi == roi2:
        raise ValueError("differential_marker needs two different regions")
    gaps = [abs(float(np.mean(_values(data, m, scale)[a]) - np.mean(_values(data, m, scale)[b]))) for m in data.markers]
    return data.markers[int(np.argmax(gaps))]


def top_correlated(data: Data, marker: str, scale: str) -> str:
    names = data.markers
    _values(data, marker, scale)
    values = np.stack([_values(data, m, scale) for m in names], 1)
    corr = np.corrcoef(values, rowvar=False)[names.index(marker)]
    corr[names.index(marker)] = -np.inf
    return names[int(np.argmax(corr))]


def lloyd(x: np.ndarray, k: int, seed: int = 0, iterations: int = 100) -> np.ndarray:
    """k-means (Lloyd's iterations from a seeded k-means++ start) on the rows of ``x``; cluster labels."""
    rng = np.random.default_rng(seed)
    centres = [x[int(rng.integers(len(x)))]]
    d2 = np.sum((x - centres[0]) ** 2, axis=1)
    for _ in range(1, k):
        centres.append(x[int(rng.choice(len(x), p=d2 / d2.sum()))])
        d2 = np.minimum(d2, np.sum((x - centres[-1]) ** 2, axis=1))
    c = np.array(centres)
    labels = np.full(len(x), -1)
    for _ in range(iterations):
        dist = np.sum(x**2, 1)[:, None] - 2 * x @ c.T + np.sum(c**2, 1)[None, :]
        new = np.argmin(dist, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            if np.any(labels == j):
                c[j] = x[labels == j].mean(0)
    return labels.astype(np.int64)


def kmeans(data: Data, k: int, scale: str) -> np.ndarray:
    """k-means (seeded) on the z-scored marker intensities after ``scale``; cluster labels per cell."""
    if not 2 <= k <= 20:
        raise ValueError("k must lie in [2, 20]")
    x = np.stack([_values(data, m, scale) for m in data.markers], 1)
    x = (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1.0)
    return lloyd(x, k)


def neighbour_fraction(data: Data, source: str, target: str, radius: int, scale: str) -> float:
    """Of all neighbours within ``radius`` px of ``source`` cells, the fraction that are ``target`` cells."""
    src, tgt = _phenotype(data, source, scale), _phenotype(data, target, scale)
    _radius(radius)
    idx = np.flatnonzero(src)
    if idx.size == 0:
        return float("nan")
    xy = _coords(data.cells)
    hits = cKDTree(xy).query_ball_point(xy[idx], r=float(radius))
    neigh = np.concatenate([np.array([j for j in h if j != i], dtype=int) for i, h in zip(idx, hits)])
    return float(np.mean(tgt[neigh])) if neigh.size else float("nan")


def nearest_distance(data: Data, source: str, target: str, scale: str) -> float:
    """Median distance (px) from each ``source`` cell to its nearest ``target`` cell (another cell when equal)."""
    src, tgt = _phenotype(data, source, scale), _phenotype(data, target, scale)
    xy = _coords(data.cells)
    if not src.any() or not tgt.any() or (source == target and tgt.sum() < 2):
        return float("nan")
    d = cKDTree(xy[tgt]).query(xy[src], k=2 if source == target else 1)[0]
    return float(np.median(d[:, -1] if d.ndim == 2 else d))


def interaction(
    data: Data, source: str, target: str, radius: int, scale: str, permutations: int = 100, seed: int = 0
) -> str:
    """Permutation test of ``source``-``target`` contacts within ``radius``: labels shuffled (seeded); returns
    ``enriched`` / ``depleted`` (two-sided p < 0.05) or ``none``."""
    src, tgt = _phenotype(data, source, scale), _phenotype(data, target, scale)
    _radius(radius)
    pairs = cKDTree(_coords(data.cells)).query_pairs(r=float(radius), output_type="ndarray")
    a, b = pairs[:, 0], pairs[:, 1]
    code = src.astype(np.int8) + 2 * tgt.astype(np.int8)

    def contacts(c: np.ndarray) -> int:
        s, t = (c & 1).astype(bool), (c & 2).astype(bool)
        return int(np.sum((s[a] & t[b]) | (t[a] & s[b])))

    observed = contacts(code)
    rng = np.random.default_rng(seed)
    null = np.array([contacts(rng.permutation(code)) for _ in range(permutations)])
    high = (1 + np.sum(null >= observed)) / (permutations + 1)
    low = (1 + np.sum(null <= observed)) / (permutations + 1)
    if np.minimum(high, low) * 2 >= 0.05:
        return "none"
    return "enriched" if high < low else "depleted"


def boundary_distance(data: Data, phenotype: str, roi: str, scale: str) -> float:
    """Median distance (px) from the phenotype's cells inside region ``roi`` to the region's edge, taken as
    the nearest cell outside the region."""
    inside = _region(data, roi)
    sel = _phenotype(data, phenotype, scale) & inside
    if not sel.any() or inside.all():
        return float("nan")
    xy = _coords(data.cells)
    return float(np.median(cKDTree(xy[~inside]).query(xy[sel])[0]))


def morans_i(data: Data, marker: str, k: int, scale: str) -> float:
    """Moran's I of the marker's intensity (after ``scale``) on the k-nearest-neighbour graph (binary,
    row-standardised weights)."""
    if not 1 <= k <= 100:
        raise ValueError("k must lie in [1, 100]")
    x = _values(data, marker, scale)
    z = x - x.mean()
    _, idx = cKDTree(_coords(data.cells)).query(_coords(data.cells), k=k + 1)
    lag = z[idx[:, 1:]].mean(1)
    return float(np.sum(z * lag) / np.sum(z * z))


def density(data: Data, phenotype: str, roi: str, scale: str) -> float:
    """Cells of the phenotype per 10,000 px^2 of the region's convex hull."""
    inside = _region(data, roi)
    if inside.sum() < 3:
        return float("nan")
    area = ConvexHull(_coords(data.cells)[inside]).volume
    return float(np.sum(_phenotype(data, phenotype, scale) & inside) / area * 1e4)


def _p(name: str, kind: str, required: bool = True) -> Param:
    return Param(name, kind, required)


MARKER, PHENO, SCALE = _p("marker", "marker"), _p("phenotype", "phenotype"), _p("scale", "scale")
ROI = _p("roi", "region", required=False)
SKILLS = {
    s.name: s
    for s in [
        Skill(
            "count_cells",
            "number of cells, in a region or larger than min_area pixels",
            count_cells,
            (ROI, _p("min_area", "int", False)),
            "count",
        ),
        Skill(
            "morphology",
            "median shape feature (Area, Eccentricity, ...) of a phenotype's cells",
            morphology,
            (_p("feature", "feature"), PHENO, SCALE),
            "value",
            gated=True,
        ),
        Skill(
            "mean_intensity",
            "mean marker intensity after a transform; arcsinh(x / cofactor), cofactor 5 unless given",
            mean_intensity,
            (MARKER, SCALE, _p("cofactor", "int", False)),
            "value",
        ),
        Skill(
            "gate",
            "fraction of cells positive for a marker by its manual gate",
            gate,
            (MARKER, SCALE, ROI),
            "fraction",
            gated=True,
        ),
        Skill(
            "co_positive",
            "fraction of cells positive for both of two markers",
            co_positive,
            (MARKER, _p("marker2", "marker"), SCALE),
            "fraction",
            gated=True,
        ),
        Skill(
            "phenotype_count",
            "number of cells of a phenotype from the gating workflow",
            phenotype_count,
            (PHENO, SCALE, ROI),
            "count",
            gated=True,
        ),
        Skill(
            "phenotype_fraction",
            "fraction of the cells (of a region) that are of a phenotype",
            phenotype_fraction,
            (PHENO, SCALE, ROI),
            "fraction",
            gated=True,
        ),
        Skill(
            "most_abundant",
            "the most frequent phenotype (in a region)",
            most_abundant,
            (SCALE, ROI),
            "label",
            gated=True,
        ),
        Skill(
            "differential_marker",
            "the marker whose mean intensity differs most between two regions",
            differential_marker,
            (_p("roi", "region"), _p("roi2", "region"), SCALE),
            "label",
        ),
        Skill(
            "top_correlated",
            "the marker most correlated with a marker",
            top_correlated,
            (MARKER, SCALE),
            "label",
        ),
        Skill(
            "kmeans",
            "k-means clustering of the cells on their marker intensities",
            kmeans,
            (_p("k", "int"), SCALE),
            "clustering",
        ),
        Skill(
            "neighbour_fraction",
            "fraction of the neighbours within a radius of source cells that are target cells",
            neighbour_fraction,
            (_p("source", "phenotype"), _p("target", "phenotype"), _p("radius", "int"), SCALE),
            "fraction",
            gated=True,
        ),
        Skill(
            "nearest_distance",
            "median distance from source cells to the nearest target cell",
            nearest_distance,
            (_p("source", "phenotype"), _p("target", "phenotype"), SCALE),
            "distance",
            gated=True,
        ),
        Skill(
            "interaction",
            "are source-target contacts within a radius enriched, depleted or none",
            interaction,
            (_p("source", "phenotype"), _p("target", "phenotype"), _p("radius", "int"), SCALE),
            "label",
            gated=True,
        ),
        Skill(
            "boundary_distance",
            "median distance from a phenotype's cells in a region to its edge",
            boundary_distance,
            (PHENO, _p("roi", "region"), SCALE),
            "distance",
            gated=True,
        ),
        Skill(
            "morans_i",
            "Moran's I of a marker's intensity over the k nearest neighbours",
            morans_i,
            (MARKER, _p("k", "int"), SCALE),
            "value",
        ),
        Skill(
            "density",
            "cells of a phenotype per 10k square pixels of a region",
            density,
            (PHENO, _p("roi", "region"), SCALE),
            "value",
            gated=True,
        ),
    ]
}


def tools_for(answer_type: str, typed: bool = True) -> list[str]:
    """The tools an agent is offered for a task: with typed calls, those that return the task's answer type
    (the task spec declares it, as a function-calling schema would); all tools otherwise."""
    return [name for name, skill in SKILLS.items() if not typed or skill.returns == answer_type] or list(SKILLS)
