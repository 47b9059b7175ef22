"""End to end on the embedded default: every enabled paper, the scoreboard, the report, and reruns.

One run of the whole default workflow (module fixture) on a copy of the repo; the rerun tests then
edit that copy and ask a dry-run what it would execute.
"""

import csv
import json
import time

import pytest
import yaml
from workflow_tools import copy_workflow, scheduled_rules, snakemake

from repro.config import enabled_papers

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("e2e") / "wf")
    start = time.perf_counter()
    snakemake(work, "--cores", "2", "--report-after-run", "--report", "results/report.html", timeout=3600)
    print(f"embedded default end to end: {time.perf_counter() - start:.1f} s")
    return work


def _config(work):
    return yaml.safe_load((work / "config/config.yaml").read_text())


def test_every_enabled_paper_has_results(finished):
    for slug in enabled_papers(_config(finished)):
        folder = finished / "results" / slug
        for name in ("metrics.json", "claims.json", "provenance.json"):
            assert (folder / name).stat().st_size > 0, f"{slug}: {name} missing"
        assert list((folder / "figures").glob("*.png")), f"{slug}: no figures"
        claims = json.loads((folder / "claims.json").read_text())["claims"]
        assert claims and all(c["verdict"] in ("pass", "fails") for c in claims)
        provenance = json.loads((folder / "provenance.json").read_text())
        assert provenance["packages"]["snakemake"] and provenance["config"]["paper"]["enabled"]


def test_scoreboard_gathers_every_claim(finished):
    rows = list(csv.DictReader((finished / "results/scoreboard.csv").open()))
    papers = enabled_papers(_config(finished))
    assert {r["paper"] for r in rows} == set(papers)
    n_claims = sum(len(json.loads((finished / "results" / p / "claims.json").read_text())["claims"]) for p in papers)
    assert len(rows) == n_claims
    md = (finished / "results/scoreboard.md").read_text()
    assert "not built yet" in md and "| hysomi |" in md


def test_report_lands_on_the_scoreboard(finished):
    html = (finished / "results/report.html").read_text()
    assert "Reproduction scoreboard" in html
    assert "HySoMi" in html


def test_nothing_left_to_do(finished):
    assert scheduled_rules(finished) == {}


def test_editing_hysomi_code_reruns_only_hysomi(finished):
    path = finished / "scripts/repro/papers/hysomi/evaluate.py"
    original = path.read_text()
    try:
        path.write_text(original + "\n# edited\n")
        jobs = scheduled_rules(finished)
    finally:
        path.write_text(original)
    assert {"hysomi_train", "hysomi_evaluate", "hysomi_figures"} <= set(jobs)
    assert set(jobs) <= {
        "hysomi_train",
        "hysomi_evaluate",
        "hysomi_figures",
        "hysomi",
        "provenance",
        "scoreboard",
        "all",
    }
    assert jobs.get("provenance", 0) <= 1


def test_changing_the_trait_generator_seed_reruns_only_its_consumers(finished):
    path = finished / "config/config.yaml"
    original = path.read_text()
    config = yaml.safe_load(original)
    config["data"]["metagenome"]["embedded"]["seed"] += 1
    try:
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        jobs = scheduled_rules(finished)
    finally:
        path.write_text(original)
    assert "metagenome_data" in jobs and "hysomi_train" in jobs
    assert set(jobs) <= {
        "metagenome_data",
        "hysomi_train",
        "hysomi_evaluate",
        "hysomi_figures",
        "hysomi",
        "provenance",
        "scoreboard",
        "all",
    }
