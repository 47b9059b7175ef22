"""Two fresh runs of the same commit give the same claims, whatever ``--cores`` (DESIGN.md, "Scales").

CI runs a few cheap papers that train models with ``--cores 1`` in a fresh copy and compares their claims with
those of the tests' shared fresh run of the embedded default, made with ``--cores 2`` (fixture ``default_run``);
``python benchmarks/identical_reruns.py --all`` runs both sides fresh for every paper.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import identical_reruns  # noqa: E402

PAPERS = ["lwe", "special"]


@pytest.mark.e2e
def test_two_fresh_runs_at_other_core_counts_give_identical_claims(default_run, tmp_path):
    one_core = identical_reruns.fresh_run(PAPERS, tmp_path / "cores1", cores=1)
    assert identical_reruns.differences(one_core, identical_reruns.claims_of(default_run, PAPERS)) == []


def test_a_changed_value_is_reported_as_a_difference():
    claim = {"ours": 0.5, "interval": [0.4, 0.6], "verdict": "pass", "timing": False}
    first = {("alpha", "c1"): claim, ("alpha", "t1"): claim | {"timing": True}}
    second = {("alpha", "c1"): claim | {"ours": 0.51}, ("alpha", "t1"): claim | {"timing": True, "ours": 9.0}}
    assert identical_reruns.differences(first, second) == ["alpha c1: ours 0.5 (--cores 1) != 0.51 (--cores 2)"]
