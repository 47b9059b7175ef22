"""The rehearsal of paper scale runs every paper end to end on this machine, and every claim it computes
is measured: ``n/a`` in a rehearsal means a paper-scale path computed nothing (DESIGN.md, "Scales").

One session-scoped run of ``snakemake --cores 2 --configfile config/full.yaml config/rehearsal.yaml`` in a
fresh copy (benchmarks/rehearsal.py, which also times it; the time goal lives there, not in a test).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import rehearsal  # noqa: E402

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="session")
def rehearsal_run(tmp_path_factory) -> dict:
    papers = rehearsal.enabled_papers(rehearsal.load_config(*rehearsal.OVERLAYS))
    result = rehearsal.rehearse(tmp_path_factory.mktemp("rehearsal") / "wf", papers, 2, [])
    print(f"rehearsal of {len(papers)} papers: {result['wall_s']:.0f} s at --cores 2")
    return result


def test_rehearsal_runs_every_paper_end_to_end(rehearsal_run):
    assert rehearsal_run["returncode"] == 0, rehearsal_run["stderr_tail"]
    papers = rehearsal.enabled_papers(rehearsal.load_config(*rehearsal.OVERLAYS))
    assert sorted(rehearsal_run["papers"]) == sorted(papers)


def test_every_claim_of_the_rehearsal_is_measured(rehearsal_run):
    assert not rehearsal_run["not_measured"], rehearsal_run["not_measured"]
    scales = {c["scale"] for claims in rehearsal_run["papers"].values() for c in claims}
    assert scales == {"full"}
