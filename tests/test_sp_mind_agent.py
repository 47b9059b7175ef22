"""SP-Mind's skills against independent computations, the verify-and-revise loop, graders and readers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from repro.papers.sp_mind import skills
from repro.papers.sp_mind.agent import solve
from repro.papers.sp_mind.bench import grade, read_tasks, task_specs
from repro.papers.sp_mind.cells import read_gates, read_h5ad, read_workflow
from repro.papers.sp_mind.data import reference_answers
from repro.papers.sp_mind.planners import RetrievalPlanner, RulePlanner, extract_arguments
from repro.papers.sp_mind.reference import phenotype_counts
from repro.workflow.io import InputError

MARKERS = ["ELANE", "CD57", "CD45", "CD11B", "SMA", "CD16", "ECAD", "FOXP3", "NCAM"]
WORKFLOW_CSV = (
    "\ufeff,,ELANE,CD57,CD45,CD11B,SMA,CD16,ECAD,FOXP3,NCAM\n"
    "all,ECAD+,,,,,,,pos,,\nall,Immune,,,pos,,,,,,\nall,SMA+,,,,,pos,,,,\n"
    "Immune,NK cells,,allpos,,neg,,allpos,,,\nImmune,Other myeloid cells,,,,pos,,,,,\nImmune,Treg,,,,,,,,pos,\n"
    "Other myeloid cells,Dendritic cells,,allneg,,,,allneg,,,\n"
)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> skills.Data:
    """400 cells on a 600 px square, raw intensities lognormal around the gates, two ROIs."""
    folder = tmp_path_factory.mktemp("cycif")
    rng = np.random.default_rng(0)
    n = 400
    cells = pd.DataFrame(
        {"sample": "s", "cell_id": np.arange(n), "x": rng.uniform(0, 600, n), "y": rng.uniform(0, 600, n)}
    )
    for m in MARKERS:
        cells[m] = np.exp(rng.normal(7.0, 0.8, n))
    cells["Area"] = rng.uniform(50, 500, n)
    cells["roi"] = np.where(cells.x < 200, "ROI1", np.where(cells.x > 450, "ROI2", "Other"))
    (folder / "gates.csv").write_text("markers,s\n" + "".join(f"{m},7.0\n" for m in MARKERS))
    (folder / "workflow.csv").write_text(WORKFLOW_CSV, encoding="utf-8")
    return skills.Data(cells, read_gates(folder / "gates.csv"), read_workflow(folder / "workflow.csv"))


def test_two_gating_code_paths_give_the_same_phenotypes(data):
    labels = data.labels("log1p")
    assert dict(zip(*np.unique(labels, return_counts=True))) == phenotype_counts(data.cells, data.gates, data.workflow)
    assert {"Unknown", "Immune", "ECAD+"} <= set(labels)


def test_spatial_skills_match_brute_force(data):
    labels = data.labels("log1p")
    xy = data.cells[["x", "y"]].to_numpy()
    d = cdist(xy, xy)
    src, tgt = labels == "Immune", labels == "ECAD+"
    expected = np.median(d[np.ix_(src, tgt)].min(1))
    assert skills.nearest_distance(data, "Immune", "ECAD+", scale="log1p") == pytest.approx(expected)
    near = (d[src] <= 60.0) & ~np.eye(len(xy), dtype=bool)[src]
    share = (near & tgt[None, :]).sum() / near.sum()
    assert skills.neighbour_fraction(data, "Immune", "ECAD+", radius=60.0, scale="log1p") == pytest.approx(share)
    frac = np.mean(np.log1p(data.cells["CD45"]) >= 7.0)
    assert skills.gate(data, "CD45", scale="log1p") == pytest.approx(frac)


def test_interaction_finds_planted_contacts_and_is_seeded():
    n = 300
    rng = np.random.default_rng(1)
    cells = pd.DataFrame({"x": rng.uniform(0, 1000, n), "y": rng.uniform(0, 1000, n), "A": 1.0, "roi": ""})
    cells.loc[:19, ["x", "y"]] = rng.uniform(0, 30, (20, 2))
    gates = pd.DataFrame({"marker": ["A"], "gate": [0.5], "scale": ["raw"]})
    data = skills.Data(cells, gates, pd.DataFrame(columns=["parent", "phenotype", "marker", "rule"]))
    data._labels["raw"] = np.where(np.arange(n) < 20, np.where(np.arange(n) % 2 == 0, "P", "Q"), "R")
    first = skills.interaction(data, "P", "Q", radius=40.0, permutations=50, seed=3)
    assert first == "enriched" == skills.interaction(data, "P", "Q", radius=40.0, permutations=50, seed=3)


def test_verification_catches_raw_scale_gates_and_revises(data):
    specs = reference_answers(data, task_specs(0, 20))
    spec = next(s for s in specs if s["reference"]["skill"] == "gate" and "roi" not in s["reference"]["params"])
    with_check = solve(data, RulePlanner(), spec, verify=True, max_attempts=4)
    without = solve(data, RulePlanner(), spec, verify=False, max_attempts=4)
    assert grade(spec, with_check["answer"]) and with_check["calls"] >= 2
    assert any("on scale raw" in p for f in with_check["failures"] for p in f["problems"])
    assert not grade(spec, without["answer"]) and without["calls"] == 1


def test_reference_solver_passes_and_planners_read_arguments(data):
    specs = reference_answers(data, task_specs(0, 20))
    assert len(specs) >= 30 and len({s["category"] for s in specs}) >= 8
    assert all(grade(s, s["expected"]) for s in specs)
    assert extract_arguments("neighbours within 50 pixels of SMA+ cells are Immune cells in ROI2") == {
        "phenotype": "SMA+",
        "source": "SMA+",
        "target": "Immune",
        "roi": "ROI2",
        "radius": 50.0,
    }
    assert (
        RetrievalPlanner(docs=True).rank("median distance from Treg cells to the nearest ECAD+ cell", "sp000")[0]
        == "nearest_distance"
    )


def test_graders_use_tolerance_and_exact_labels():
    spec = {"grader": "numeric", "tolerance": 0.01, "expected": 2.0}
    assert grade(spec, 2.01) and not grade(spec, 2.1) and not grade(spec, float("nan")) and not grade(spec, None)
    assert grade({"grader": "label", "expected": "SMA"}, "SMA") and not grade(
        {"grader": "label", "expected": "SMA"}, "ECAD"
    )


def test_readers_name_bad_inputs(tmp_path):
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "x", "prompt": "?"}]))
    with pytest.raises(InputError, match="lacks"):
        read_tasks(tmp_path / "tasks.json")
    (tmp_path / "gates.csv").write_text("markers,s\nCD45,high\n")
    with pytest.raises(InputError, match="non-numeric gates"):
        read_gates(tmp_path / "gates.csv")
    (tmp_path / "wf.csv").write_text(",,CD45\nall,Immune,maybe\n")
    with pytest.raises(InputError, match="unknown rule"):
        read_workflow(tmp_path / "wf.csv")
    import anndata

    anndata.AnnData(np.zeros((3, 2), dtype=np.float32)).write_h5ad(tmp_path / "bad.h5ad")
    with pytest.raises(InputError, match="lacks obs columns"):
        read_h5ad(tmp_path / "bad.h5ad")
