"""One registry of reported numbers: resources/<slug>/reported.yaml, one schema, one loader.

resources/papers.yaml holds identity only; every reported file validates with repro.reporting.registry.load_reported;
derived numbers agree with the entries they are derived from; every claim's ``reported=`` key exists; and
every rule whose code reads reported numbers lists the paper's file as an input (so editing it reruns them).
"""

from __future__ import annotations

import importlib
import re

import pytest
import yaml
from test_slurm_harness import copy_tree, loaded_workflow
from workflow_tools import REPO

from repro.reporting.registry import IDENTITY, load_papers, load_reported
from repro.workflow.code_closure import import_closure
from repro.workflow.io import InputError

FILES = sorted(REPO.glob("resources/*/reported.yaml"))
# How a paper's own code reads its reported numbers (shared modules only define the loader).
READS = re.compile(r"load_reported\(|attach_paper_values\(|reported\.yaml")
GOOD = {"value": 1.5, "unit": "K", "where": "Table 2", "evidence": "table"}


def _write(tmp_path, content) -> str:
    path = tmp_path / "reported.yaml"
    path.write_text(yaml.safe_dump(content))
    return str(path)


def test_papers_registry_holds_identity_only():
    for slug, entry in load_papers().items():
        extra = set(entry) - set(IDENTITY)
        assert not extra, (
            f"resources/papers.yaml: {slug} has {sorted(extra)}; numbers go to resources/{slug}/reported.yaml"
        )


@pytest.mark.parametrize("path", FILES, ids=[p.parent.name for p in FILES])
def test_every_reported_file_validates_and_belongs_to_a_paper(path):
    assert path.parent.name in load_papers(), f"{path}: no paper {path.parent.name!r} in resources/papers.yaml"
    for key, entry in load_reported(path).items():
        assert entry["source"], f"{path}: {key} has no source"


def test_derived_numbers_are_ratios_of_their_entries():
    checked = 0
    for path in FILES:
        entries = load_reported(path)
        for key, entry in entries.items():
            if "derived_from" in entry:
                num, den = (entries[k]["value"] for k in entry["derived_from"])
                assert entry["value"] == pytest.approx(num / den, abs=5e-5), f"{path}: {key}"
                checked += 1
    assert checked, "no derived entry found (nmrshift's dmso_1H_mae_ratio is one)"


def test_claims_name_existing_reported_entries():
    for claims in sorted(REPO.glob("scripts/repro/papers/*/claims.py")):
        pkg = claims.parent.name
        slug = next(s for s in load_papers() if s.replace("-", "_") == pkg)
        entries = load_reported(REPO / f"resources/{slug}/reported.yaml")
        for spec in importlib.import_module(f"repro.papers.{pkg}.claims").CLAIMS:
            if spec.reported is not None:
                assert spec.reported in entries, f"claim {spec.id} of {slug} names reported entry {spec.reported!r}"


def test_loader_fills_the_default_source(tmp_path):
    path = _write(tmp_path, {"source": "arXiv:1", "reported": {"a": GOOD, "b": {**GOOD, "source": "README"}}})
    got = load_reported(path)
    assert got["a"]["source"] == "arXiv:1" and got["b"]["source"] == "README"
    assert got["a"]["where"] == "Table 2" and got["a"]["evidence"] == "table"


@pytest.mark.parametrize(
    "content,message",
    [
        ({"source": "x"}, "needs a 'reported' mapping"),
        ({"reported": {"a": GOOD}}, "top level: 'source' is a required property"),
        ({"source": "x", "reported": {"a": {"value": 1, "evidence": "table"}}}, "entry 'a': 'where' is a required"),
        (
            {"source": "x", "reported": {"a": {**GOOD, "evidence": "slide"}}},
            "entry 'a': evidence: 'slide' is not one of",
        ),
        ({"source": "x", "reported": {"a": {**GOOD, "value": [1]}}}, "entry 'a': value: [1] is not of type"),
        ({"source": "x", "slug": "p", "reported": {}}, "Additional properties are not allowed ('slug'"),
    ],
)
def test_loader_names_file_and_entry(tmp_path, content, message):
    path = _write(tmp_path, content)
    with pytest.raises(InputError) as err:
        load_reported(path)
    assert path in str(err.value) and message in str(err.value)


def test_rules_reading_reported_numbers_list_the_file(tmp_path):
    """A rule whose code loads reported numbers has the paper's reported.yaml as a named input."""
    root = copy_tree(tmp_path / "repo")
    with loaded_workflow(root, []) as (workflow, _):
        rules = [(r.name, r.params.get("entry"), {str(f) for f in r.input}) for r in workflow.rules]
    readers = 0
    for name, entry, inputs in rules:
        if not isinstance(entry, str) or not entry.startswith("repro.papers."):
            continue
        own = [p for p in import_closure(entry) if f"/papers/{entry.split('.')[2]}/" in str(p)]
        if not any(READS.search(p.read_text()) for p in own):
            continue
        readers += 1
        slug = next(s for s in load_papers() if s.replace("-", "_") == entry.split(".")[2])
        assert f"resources/{slug}/reported.yaml" in inputs, f"rule {name} reads reported numbers but lacks the input"
    assert readers, "no rule reads reported numbers"
