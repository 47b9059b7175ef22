"""Two fresh runs of the same commit give the same claims, whatever ``--cores`` (DESIGN.md, "Scales").

CI runs benchmarks/identical_reruns.py on a few cheap papers that train models (``--cores 1``, then
``--cores 2``, each in a fresh copy); ``python benchmarks/identical_reruns.py --all`` checks every paper.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import identical_reruns  # noqa: E402

PAPERS = ["poisson-eat", "special"]


@pytest.mark.e2e
def test_two_fresh_runs_at_other_core_counts_give_identical_claims(tmp_path):
    assert identical_reruns.run_twice(PAPERS, tmp_path) == []


def test_a_changed_value_is_reported_as_a_difference():
    claim = {"ours": 0.5, "interval": [0.4, 0.6], "verdict": "pass", "timing": False}
    first = {("alpha", "c1"): claim, ("alpha", "t1"): claim | {"timing": True}}
    second = {("alpha", "c1"): claim | {"ours": 0.51}, ("alpha", "t1"): claim | {"timing": True, "ours": 9.0}}
    assert identical_reruns.differences(first, second) == ["alpha c1: ours 0.5 (--cores 1) != 0.51 (--cores 2)"]
