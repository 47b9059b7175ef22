"""Every number a paper module compares against (resources/<slug>/reported.yaml) is in the registry.

The registry (resources/papers.yaml) and the per-paper files are both transcribed from the paper briefs;
this keeps them from drifting apart.
"""

import math

import pytest
import yaml
from workflow_tools import REPO

from repro.registry import load_papers

FILES = sorted(REPO.glob("resources/*/reported.yaml"))


def _numbers(node):
    """Every numeric ``value`` in a reported file, whatever its nesting (derived ones aside)."""
    if isinstance(node, dict):
        value = node.get("value")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and "derived_from" not in node:
            yield value
        for child in node.values():
            yield from _numbers(child)
    elif isinstance(node, list):
        for child in node:
            yield from _numbers(child)


@pytest.mark.parametrize("path", FILES, ids=[p.parent.name for p in FILES])
def test_paper_numbers_match_the_registry(path):
    registry = [e["value"] for e in load_papers()[path.parent.name]["reported"].values()]
    stray = [
        v
        for v in _numbers(yaml.safe_load(path.read_text()))
        if not any(math.isclose(v, w, rel_tol=1e-6) for w in registry)
    ]
    assert not stray, f"{path}: numbers not in resources/papers.yaml: {stray}"


def test_derived_numbers_are_ratios_of_registry_numbers():
    reported = load_papers()["nmrshift"]["reported"]
    entry = yaml.safe_load((REPO / "resources/nmrshift/reported.yaml").read_text())["reported"]["dmso_1H_mae_ratio"]
    num, den = (reported[k]["value"] for k in entry["derived_from"])
    assert entry["value"] == pytest.approx(num / den, abs=5e-5)
