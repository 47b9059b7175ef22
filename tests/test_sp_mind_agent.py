"""SP-Mind's skills against independent computations, the verifier, the call grammar, graders and readers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from repro.papers.sp_mind import skills
from repro.papers.sp_mind.bench import CATEGORIES, adjusted_rand, grade, read_tasks, task_specs
from repro.papers.sp_mind.calls import call_text, execute, parse_call, result_text
from repro.papers.sp_mind.cells import read_gates, read_h5ad, read_workflow
from repro.papers.sp_mind.data import reference_answers
from repro.papers.sp_mind.grammar import CallGrammar, Done, expand, follow, random_call, value_domains
from repro.papers.sp_mind.reference import phenotype_counts
from repro.papers.sp_mind.verifier import entities, findings
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
    """600 cells on a 600 px square, raw intensities lognormal around the gates, two ROIs."""
    folder = tmp_path_factory.mktemp("cycif")
    rng = np.random.default_rng(0)
    n = 600
    cells = pd.DataFrame(
        {"sample": "s", "cell_id": np.arange(n), "x": rng.uniform(0, 600, n), "y": rng.uniform(0, 600, n)}
    )
    for m in MARKERS:
        cells[m] = np.exp(rng.normal(7.0, 0.8, n))
    for f in skills.FEATURES:
        cells[f] = rng.uniform(0.1, 500, n)
    cells["roi"] = np.where(cells.x < 200, "ROI1", np.where(cells.x > 450, "ROI2", "Other"))
    cells["phenotype_ref"] = ""
    (folder / "gates.csv").write_text("markers,s\n" + "".join(f"{m},7.0\n" for m in MARKERS))
    (folder / "workflow.csv").write_text(WORKFLOW_CSV, encoding="utf-8")
    return skills.Data(cells, read_gates(folder / "gates.csv"), read_workflow(folder / "workflow.csv"))


@pytest.fixture(scope="module")
def specs(data) -> list[dict]:
    return reference_answers(data, task_specs(3, data.gate_scale, 0, 20))


def test_two_gating_code_paths_give_the_same_phenotypes(data):
    labels = data.labels("log1p")
    assert dict(zip(*np.unique(labels, return_counts=True))) == phenotype_counts(data.cells, data.gates, data.workflow)
    assert {"Unknown", "Immune", "ECAD+"} <= set(labels)


def test_spatial_skills_match_brute_force(data):
    labels = data.labels("log1p")
    xy = data.cells[["x", "y"]].to_numpy()
    d = cdist(xy, xy)
    src, tgt = labels == "Immune", labels == "ECAD+"
    assert skills.nearest_distance(data, "Immune", "ECAD+", "log1p") == pytest.approx(
        np.median(d[np.ix_(src, tgt)].min(1))
    )
    near = (d[src] <= 60.0) & ~np.eye(len(xy), dtype=bool)[src]
    share = (near & tgt[None, :]).sum() / near.sum()
    assert skills.neighbour_fraction(data, "Immune", "ECAD+", 60, "log1p") == pytest.approx(share)
    inside = data.cells["roi"].to_numpy() == "ROI1"
    sel = src & inside
    assert skills.boundary_distance(data, "Immune", "ROI1", "log1p") == pytest.approx(
        np.median(d[np.ix_(sel, ~inside)].min(1))
    )
    # Moran's I with dense row-standardised kNN weights.
    z = np.log1p(data.cells["CD45"].to_numpy()) - np.log1p(data.cells["CD45"].to_numpy()).mean()
    order = np.argsort(d, axis=1)[:, 1:6]
    w = np.zeros_like(d)
    np.put_along_axis(w, order, 1 / 5, axis=1)
    assert skills.morans_i(data, "CD45", 5, "log1p") == pytest.approx(float(z @ w @ z / (z @ z)))


def test_gating_composition_and_intensity_skills_match_pandas(data):
    logs = np.log1p(data.cells[MARKERS])
    pos = logs >= 7.0
    assert skills.gate(data, "CD45", "log1p") == pytest.approx(pos["CD45"].mean())
    assert skills.gate(data, "CD45", "log1p", roi="ROI2") == pytest.approx(pos["CD45"][data.cells.roi == "ROI2"].mean())
    assert skills.co_positive(data, "CD45", "FOXP3", "log1p") == pytest.approx((pos["CD45"] & pos["FOXP3"]).mean())
    frame = pd.DataFrame({"label": data.labels("log1p"), "roi": data.cells["roi"]})
    counts = frame[(frame.roi == "ROI1") & (frame.label != "Unknown")]["label"].value_counts()
    assert skills.most_abundant(data, "log1p", roi="ROI1") == counts.index[0]
    gaps = (logs[data.cells.roi == "ROI1"].mean() - logs[data.cells.roi == "ROI2"].mean()).abs()
    assert skills.differential_marker(data, "ROI1", "ROI2", "log1p") == gaps.idxmax()
    corr = logs.corr()["ECAD"].drop("ECAD")
    assert skills.top_correlated(data, "ECAD", "log1p") == corr.idxmax()
    assert skills.mean_intensity(data, "SMA", "arcsinh", 150) == pytest.approx(
        np.arcsinh(data.cells["SMA"] / 150).mean()
    )
    assert skills.count_cells(data, roi="ROI2", min_area=200) == int(
        ((data.cells.roi == "ROI2") & (data.cells.Area > 200)).sum()
    )
    cell = frame.label == "Immune"
    assert skills.morphology(data, "Solidity", "Immune", "log1p") == pytest.approx(
        data.cells["Solidity"][cell].median()
    )
    square = skills.Data(
        pd.DataFrame({"x": [0, 100, 0, 100, 50], "y": [0, 0, 100, 100, 50], "roi": "ROI1", "A": 10.0}),
        pd.DataFrame({"marker": ["A"], "gate": [1.0], "scale": ["log1p"]}),
        pd.DataFrame({"parent": ["all"], "phenotype": ["P"], "marker": ["A"], "rule": ["pos"]}),
    )
    assert skills.density(square, "P", "ROI1", "log1p") == pytest.approx(5 / 10_000 * 1e4)


def test_kmeans_agrees_with_scikit_learn_and_ari_with_its_metric():
    rng = np.random.default_rng(3)
    centres = rng.normal(0, 6, (4, 5))
    truth = rng.integers(0, 4, 800)
    x = centres[truth] + rng.normal(0, 1, (800, 5))
    ours = skills.lloyd(x, 4)
    theirs = KMeans(4, n_init=4, random_state=0).fit_predict(x)
    assert adjusted_rand(ours, theirs) > 0.95 and adjusted_rand(ours, truth) > 0.95
    noisy = np.where(rng.random(800) < 0.3, rng.integers(0, 4, 800), truth)
    assert adjusted_rand(noisy, truth) == pytest.approx(adjusted_rand_score(noisy, truth))
    assert np.array_equal(skills.lloyd(x, 4), ours)


def test_interaction_finds_planted_contacts_and_is_seeded():
    n = 300
    rng = np.random.default_rng(1)
    cells = pd.DataFrame({"x": rng.uniform(0, 1000, n), "y": rng.uniform(0, 1000, n), "A": 1.0, "roi": ""})
    cells.loc[:19, ["x", "y"]] = rng.uniform(0, 30, (20, 2))
    gates = pd.DataFrame({"marker": ["A"], "gate": [0.5], "scale": ["raw"]})
    workflow = pd.DataFrame(
        {"parent": ["all", "all"], "phenotype": ["P", "Q"], "marker": ["A", "A"], "rule": ["pos"] * 2}
    )
    data = skills.Data(cells, gates, workflow)
    data._labels["raw"] = np.where(np.arange(n) < 20, np.where(np.arange(n) % 2 == 0, "P", "Q"), "R")
    first = skills.interaction(data, "P", "Q", 40, "raw", permutations=50, seed=3)
    assert first == "enriched" == skills.interaction(data, "P", "Q", 40, "raw", permutations=50, seed=3)
    with pytest.raises(ValueError, match="radius"):
        skills.interaction(data, "P", "Q", skills.MAX_RADIUS + 1, "raw")


def test_reference_solver_passes_every_grader_over_18_categories(specs):
    assert len(CATEGORIES) == 18 and {s["category"] for s in specs} == set(CATEGORIES)
    assert len({s["id"] for s in specs}) == len(specs)
    assert all(grade(s, s["expected"]) for s in specs)


def test_verifier_accepts_every_reference_call_and_names_the_errors_of_wrong_ones(data, specs):
    for spec in specs:
        ref = spec["reference"]
        call = {"skill": ref["skill"], "params": ref["params"]}
        result, error = execute(data, call, ref["hidden"])
        assert findings(spec, call, result, error, data) == [], spec["id"]
    spec = next(s for s in specs if s["id"] == "composition_0")  # fraction of the cells in ROI1 that are Immune
    assert entities(spec["prompt"], data)["region"] == {"ROI1"} and entities(spec["prompt"], data)["phenotype"] == {
        "Immune"
    }
    wrong = {"skill": "phenotype_fraction", "params": {"phenotype": "Treg", "scale": "raw", "roi": "ROI2"}}
    texts = {f["text"]: f for f in findings(spec, wrong, *execute(data, wrong), data)}
    assert {"Immune is missing", "ROI1 is missing", "Treg is not in the task", "ROI2 is not in the task"} <= set(texts)
    assert texts["the gates are on the log1p scale, not raw"]["value"] == ("scale", "raw")
    assert texts["Treg is not in the task"]["value"] == ("phenotype", "Treg")
    assert texts["ROI2 is not in the task"]["value"] == ("region", "ROI2")
    typed = {"skill": "count_cells", "params": {"roi": "ROI1"}}
    texts = {f["text"]: f for f in findings(spec, typed, *execute(data, typed), data)}
    assert texts["count_cells returns a count, not a fraction"]["tool"] == "count_cells"
    assert texts["Immune is missing"]["tool"] == "count_cells"  # it cannot take a phenotype
    qc = next(s for s in specs if s["id"] == "qc_0")
    extra = {"skill": "count_cells", "params": {"roi": "ROI1", "min_area": 100}}
    texts = {f["text"]: f for f in findings(qc, extra, *execute(data, extra), data)}
    assert texts["ROI1 is not in the task"]["param"] == "roi" and "300 is missing" in texts


def walk(node, rng) -> list[int]:
    tokens = []
    while not isinstance(expanded := expand(node), Done):
        token = sorted(expanded)[int(rng.integers(len(expanded)))]
        tokens.append(token)
        node = follow(expanded[token])
    return tokens


def test_the_call_grammar_writes_only_valid_calls_and_honours_exclusions(data):
    vocab = {}

    def encode(text: str) -> list[int]:  # a character-level tokenizer
        return [vocab.setdefault(ch, len(vocab)) for ch in text]

    chars = {}
    grammar = CallGrammar(encode, data.markers, data.phenotypes, digits=3)
    rng = np.random.default_rng(0)
    tools = ["gate", "co_positive", "neighbour_fraction", "count_cells"]
    for _ in range(200):
        node = grammar.call(tools, exclude={"marker": {"CD45"}, "int": {30}}, drop={"roi"})
        tokens = walk(node, rng)
        chars = {i: c for c, i in vocab.items()}
        call = parse_call("".join(chars[t] for t in tokens))
        assert call["skill"] in tools and "roi" not in call["params"]
        assert "CD45" not in call["params"].values() and 30 not in call["params"].values()
        for p in skills.SKILLS[call["skill"]].params:
            assert p.name in call["params"] or not p.required
            if p.name in call["params"] and p.kind == "int":
                assert 1 <= call["params"][p.name] < 1000
            elif p.name in call["params"]:
                assert call["params"][p.name] in value_domains(data.markers, data.phenotypes)[p.kind]
        assert parse_call(call_text(call)) == call
    finish = walk(grammar.call(["gate"], finish=True), np.random.default_rng(5))
    assert "".join(chars.get(t, "?") for t in finish).startswith("Call:")


def test_random_calls_are_seeded_and_typed(data):
    domains = value_domains(data.markers, data.phenotypes)
    a = [random_call(skills.tools_for("fraction"), domains, np.random.default_rng([0, 1])) for _ in range(3)]
    b = [random_call(skills.tools_for("fraction"), domains, np.random.default_rng([0, 1])) for _ in range(3)]
    assert a == b and all(skills.SKILLS[c["skill"]].returns == "fraction" for c in a)
    assert set(skills.tools_for("count")) == {"count_cells", "phenotype_count"}


def test_graders_use_tolerance_exact_labels_and_ari():
    spec = {"grader": "numeric", "tolerance": 0.01, "expected": 2.0}
    assert grade(spec, 2.01) and not grade(spec, 2.1) and not grade(spec, float("nan")) and not grade(spec, None)
    assert not grade(spec, "2.0")
    assert grade({"grader": "label", "expected": "SMA"}, "SMA") and not grade(
        {"grader": "label", "expected": "SMA"}, "ECAD"
    )
    labels = np.repeat(np.arange(3), 10)
    clustering = {"grader": "ari", "tolerance": 0.9, "expected": labels.tolist()}
    assert grade(clustering, (labels + 1) % 3) and not grade(clustering, np.zeros(30, int))
    assert result_text(labels, None) == "3 clusters of sizes 10, 10, 10" and result_text(None, "bad") == "error: bad"


def test_readers_name_bad_inputs(tmp_path):
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "x", "prompt": "?"}]))
    with pytest.raises(InputError, match="lacks"):
        read_tasks(tmp_path / "tasks.json")
    good = {"id": "x", "category": "qc", "prompt": "?", "answer_type": "count", "grader": "numeric", "tolerance": 0}
    (tmp_path / "tasks.json").write_text(json.dumps([good | {"expected": 1, "reference": {"skill": "nope"}}]))
    with pytest.raises(InputError, match="unknown reference skill"):
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
