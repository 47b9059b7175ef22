"""The README's paper table and the registry agree with what is built."""

import re

from workflow_tools import REPO

from repro.reporting.docs import README_BEGIN, README_END, target_command
from repro.reporting.registry import load_papers
from repro.reporting.scoreboard import NOT_BUILT
from repro.workflow.config import load_config

README_LIMIT_BYTES = 12_000


def _table_rows():
    """Cells of each body row of the README's paper table: paper, paper claims, checks, command."""
    text = (REPO / "README.md").read_text()
    table = text.split(README_BEGIN, 1)[1].split(README_END, 1)[0]
    lines = table.strip().splitlines()[2:]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]


def test_registry_lists_35_papers():
    papers = load_papers()
    assert len(papers) == 35
    for slug, entry in papers.items():
        assert entry["slug"] == slug and entry["title"]


def test_readme_lists_every_paper_with_its_status_and_command():
    papers = load_papers()
    rows = _table_rows()
    assert len(rows) == len(papers)
    for (slug, entry), (name, paper_claims, checks, command) in zip(papers.items(), rows):
        built = (REPO / "workflow/rules" / f"{slug}.smk").exists()
        assert entry["short"] in name, f"row {name!r} is not {slug}"
        assert (paper_claims == NOT_BUILT) != built, f"{slug}: README says {paper_claims!r}, rule file: {built}"
        if built:
            assert command == f"`{target_command(slug)}`", f"{slug}: {command!r}"
            assert re.fullmatch(r"\d+ pass · \d+ fail · \d+ inconclusive|not run yet", paper_claims) and re.fullmatch(
                r"(\d+/\d+)?", checks
            )
        if (REPO / "docs/papers" / f"{slug}.md").exists():
            assert f"(docs/papers/{slug}.md)" in name, f"{slug}: its docs page is not linked"


def test_readme_stays_short():
    assert (REPO / "README.md").stat().st_size <= README_LIMIT_BYTES


def test_every_built_paper_is_configured_at_both_scales():
    for name in ("config.yaml", "full.yaml"):
        config = load_config(f"config/{name}")
        built = {p.stem for p in (REPO / "workflow/rules").glob("*.smk")} & set(load_papers())
        assert built <= set(config["papers"]), f"{name} lacks {built - set(config['papers'])}"
