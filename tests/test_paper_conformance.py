"""Every enabled paper has what DESIGN.md's "A paper is done when" lists, in the same shape.

Rule file declared through ``declare_paper``, schema section, reported numbers, docs page with the
common headings, tests, figure captions, a ``claims`` module whose paper claims each have a
counterfactual test, and claim code that cannot drop a NaN through a built-in reduction.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest
import yaml

from repro.reporting.claims import KINDS, ClaimSpec, validate_specs
from repro.reporting.registry import load_reported
from repro.workflow.config import enabled_papers

REPO = Path(__file__).resolve().parents[1]
PAPERS = enabled_papers(yaml.safe_load((REPO / "config/config.yaml").read_text()))
DOC_HEADINGS = [
    "## What the paper claims",
    "## What we implement",
    "## Data",
    "## How to run",
    "## Paper scale",
    "## Budget",
    "## Results",
]
COUNTERFACTUAL = re.compile(r"""counterfactual\(\s*["']([\w-]+)["']\s*,\s*["'](\w+)["']\s*\)""")


def package(slug: str) -> str:
    return slug.replace("-", "_")


def counterfactual_tests() -> set[tuple[str, str]]:
    found = set()
    for path in (REPO / "tests").glob("test_*.py"):
        found |= set(COUNTERFACTUAL.findall(path.read_text()))
    return found


def claim_specs(slug: str) -> list[ClaimSpec]:
    module = importlib.import_module(f"repro.papers.{package(slug)}.claims")
    return list(module.CLAIMS)


@pytest.mark.parametrize("slug", PAPERS)
def test_paper_module_has_every_part(slug):
    rules = REPO / f"workflow/rules/{slug}.smk"
    assert re.search(rf"declare_paper\(\s*\"{slug}\"", rules.read_text()), f'{rules}: no declare_paper("{slug}")'
    assert (REPO / f"workflow/schemas/papers/{slug}.schema.yaml").is_file()
    assert load_reported(REPO / f"resources/{slug}/reported.yaml") is not None
    assert list((REPO / "tests").glob(f"test_{package(slug)}_*.py")), f"no tests/test_{package(slug)}_*.py"
    assert list((REPO / f"workflow/report/{slug}").glob("*.rst")), f"no figure captions for {slug}"
    doc = (REPO / f"docs/papers/{slug}.md").read_text()
    positions = [doc.find(h) for h in DOC_HEADINGS]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), f"docs/papers/{slug}.md headings"


@pytest.mark.parametrize("slug", PAPERS)
def test_claims_are_declared_with_a_kind(slug):
    specs = claim_specs(slug)
    ids = [s.id for s in specs]
    assert specs and len(ids) == len(set(ids))
    assert {s.kind for s in specs} <= set(KINDS)


def trains_models(slug: str) -> bool:
    """A paper trains models when its rule file declares a stage whose name starts with 'train'."""
    return bool(re.search(r"""stage\(\s*["']train""", (REPO / f"workflow/rules/{slug}.smk").read_text()))


@pytest.mark.parametrize("slug", PAPERS)
def test_paper_claims_declare_the_learning_checks_they_rest_on(slug):
    """DESIGN.md: every trained model a paper claim compares has a learning check declared before the run,
    and the claim names it (``rests_on``; ``()`` for a claim that compares no trained model)."""
    specs = claim_specs(slug)
    validate_specs(specs)
    undeclared = [s.id for s in specs if s.kind == "paper" and s.rests_on is None]
    assert not undeclared, (
        f"{slug}: paper claims without rests_on (use () where no trained model is compared): {undeclared}"
    )
    if trains_models(slug):
        assert any(s.learning for s in specs), f"{slug} trains models but declares no learning check"


@pytest.mark.parametrize("slug", PAPERS)
def test_every_paper_claim_has_a_counterfactual_test(slug):
    covered = counterfactual_tests()
    missing = [s.id for s in claim_specs(slug) if s.kind == "paper" and (slug, s.id) not in covered]
    assert not missing, f"{slug}: paper claims without a @pytest.mark.counterfactual test: {missing}"


@pytest.mark.parametrize("slug", PAPERS)
def test_claim_code_uses_no_nan_dropping_builtins(slug):
    """Built-in min/max/sum over a list with NaN can return a finite number; numpy's propagate NaN."""
    path = REPO / f"scripts/repro/papers/{package(slug)}/claims.py"
    calls = [
        node.func.id
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max", "sum")
    ]
    assert not calls, f"{path}: use numpy reductions instead of built-in {sorted(set(calls))}"


@pytest.mark.parametrize("slug", PAPERS)
def test_counterfactual_markers_name_real_paper_claims(slug):
    known = {s.id for s in claim_specs(slug) if s.kind == "paper"}
    stray = sorted(claim for paper, claim in counterfactual_tests() if paper == slug and claim not in known)
    assert not stray, f"counterfactual tests name claims that are not paper claims: {stray}"
