"""End to end on the embedded default: every enabled paper, the scoreboard, the report, and reruns.

One run of the whole default workflow (the session fixture ``default_run`` in conftest.py) on a copy
of the repo; the rerun tests then edit that copy and ask a dry-run what it would execute.
"""

import csv
import json

import pytest
import yaml
from workflow_tools import scheduled_rules

from repro.reporting.registry import load_papers
from repro.workflow.config import enabled_papers

pytestmark = pytest.mark.e2e


def _config(work):
    return yaml.safe_load((work / "config/config.yaml").read_text())


def _needs(work, slug):
    if slug not in enabled_papers(_config(work)):
        pytest.skip(f"{slug} is not enabled in config/config.yaml")


def test_every_enabled_paper_has_results(default_run):
    for slug in enabled_papers(_config(default_run)):
        folder = default_run / "results" / slug
        for name in ("metrics.json", "claims.json", "provenance.json"):
            assert (folder / name).stat().st_size > 0, f"{slug}: {name} missing"
        assert list((folder / "figures").glob("*.png")), f"{slug}: no figures"
        claims = json.loads((folder / "claims.json").read_text())["claims"]
        assert claims and all(c["kind"] in ("paper", "check") for c in claims)
        # a paper claim resting on a model whose learning check failed says neither pass nor fail
        assert all(
            c["verdict"] in (("pass", "fails", "inconclusive") if c["kind"] == "paper" else ("pass", "fails"))
            for c in claims
        )
        assert (folder / "claims.html").stat().st_size > 0, f"{slug}: no claims table for the report"
        provenance = json.loads((folder / "provenance.json").read_text())
        assert provenance["packages"]["snakemake"] and provenance["config"]["paper"]["enabled"]


def test_scoreboard_gathers_every_claim(default_run):
    rows = list(csv.DictReader((default_run / "results/scoreboard.csv").open()))
    papers = enabled_papers(_config(default_run))
    assert {r["paper"] for r in rows} == set(papers)
    n_claims = sum(len(json.loads((default_run / "results" / p / "claims.json").read_text())["claims"]) for p in papers)
    assert len(rows) == n_claims and {r["kind"] for r in rows} <= {"paper", "check"}
    summary = {r["paper"]: r for r in csv.DictReader((default_run / "results/scoreboard_papers.csv").open())}
    assert set(summary) == set(load_papers())
    for slug in papers:
        mine = [r for r in rows if r["paper"] == slug]
        for kind, column in (("paper", "paper_claims"), ("check", "checks")):
            of_kind = [r for r in mine if r["kind"] == kind]
            assert int(summary[slug][f"{column}_total"]) == len(of_kind)
            assert int(summary[slug][f"{column}_passed"]) == sum(r["verdict"] == "pass" for r in of_kind)
    md = (default_run / "results/scoreboard.md").read_text()
    assert all(f"| `{slug}` |" in md for slug in load_papers())


def test_report_lands_on_the_scoreboard(default_run):
    html = (default_run / "results/report.html").read_text()
    assert "Reproduction scoreboard" in html
    papers = load_papers()
    assert all(papers[slug]["short"] in html for slug in enabled_papers(_config(default_run)))


def test_nothing_left_to_do(default_run):
    assert scheduled_rules(default_run) == {}


# The default trains hysomi in two jobs per level (config: jobs.train grouped).
HYSOMI_TRAIN = {"hysomi_train_networks", "hysomi_train_parameters"}


def test_editing_hysomi_code_reruns_only_hysomi(default_run):
    _needs(default_run, "hysomi")
    # dataset.py is in the import closure of hysomi's train and evaluate stages (not of figures or the data).
    path = default_run / "scripts/repro/papers/hysomi/dataset.py"
    original = path.read_text()
    try:
        path.write_text(original + "\n# edited\n")
        jobs = scheduled_rules(default_run)
    finally:
        path.write_text(original)
    assert HYSOMI_TRAIN | {"hysomi_evaluate", "hysomi_figures"} <= set(jobs)  # figures: downstream of train
    assert set(jobs) <= HYSOMI_TRAIN | {
        "hysomi_evaluate",
        "hysomi_figures",
        "hysomi",
        "provenance",
        "scoreboard",
        "site",
        "all",
    }
    assert jobs.get("provenance", 0) <= 1


def test_changing_the_trait_generator_seed_reruns_only_its_consumers(default_run):
    _needs(default_run, "hysomi")
    path = default_run / "config/config.yaml"
    original = path.read_text()
    config = yaml.safe_load(original)
    config["data"]["metagenome"]["embedded"]["seed"] += 1
    try:
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        jobs = scheduled_rules(default_run)
    finally:
        path.write_text(original)
    assert "metagenome_data" in jobs and HYSOMI_TRAIN <= set(jobs)
    assert set(jobs) <= HYSOMI_TRAIN | {
        "metagenome_data",
        "hysomi_evaluate",
        "hysomi_figures",
        "hysomi",
        "provenance",
        "scoreboard",
        "site",
        "all",
    }
