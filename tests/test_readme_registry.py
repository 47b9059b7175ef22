"""The README's paper table and the registry agree with what is built."""

import re

from workflow_tools import REPO

from repro.config import load_config
from repro.registry import load_papers
from repro.scoreboard import README_BEGIN, README_END, status_table


def _table_rows():
    text = (REPO / "README.md").read_text()
    table = text.split(README_BEGIN, 1)[1].split(README_END, 1)[0]
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^\| `([a-z0-9-]+)` \| .*? \| (.*?) \|$", table, re.M)}


def test_registry_lists_35_papers():
    papers = load_papers()
    assert len(papers) == 35
    for slug, entry in papers.items():
        assert entry["slug"] == slug and entry["title"]


def test_readme_lists_every_paper_with_its_status():
    rows = _table_rows()
    assert set(rows) == set(load_papers())
    for slug, status in rows.items():
        built = (REPO / "workflow/rules" / f"{slug}.smk").exists()
        assert (status == "not built yet") != built, f"{slug}: README says {status!r}, rule file exists: {built}"


def test_every_built_paper_is_configured_at_both_scales():
    for name in ("config.yaml", "full.yaml"):
        config = load_config(f"config/{name}")
        built = {p.stem for p in (REPO / "workflow/rules").glob("*.smk")} & set(load_papers())
        assert built <= set(config["papers"]), f"{name} lacks {built - set(config['papers'])}"


def test_status_table_counts_passing_claims():
    papers = {"a": {"short": "A", "title": "t"}, "b": {"short": "B", "title": "u"}}
    rows = [{"paper": "a", "verdict": "pass"}, {"paper": "a", "verdict": "fails"}]
    table = status_table(rows, papers)
    assert "| `a` | A: t | 1/2 claims pass |" in table and "| `b` | B: u | not built yet |" in table
