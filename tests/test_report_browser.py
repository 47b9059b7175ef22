"""The HTML report as a reader sees it: rendered by a real browser (Debian's ``chromium``, headless).

``chromium --dump-dom`` prints the page after its scripts ran, i.e. what the report's React app put on
the screen: the landing page must show, at the top, one summary row per enabled paper whose counts
equal those in the paper's ``claims.json``, with a link that opens the paper's category, and one headline
figure per paper; each paper's category must hold its claims table, its figures (captioned) and its
provenance. Uses the session's one end-to-end run (``default_run``).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from workflow_tools import snakemake as snakemake_run

from repro.reporting.registry import load_papers
from repro.workflow.config import enabled_papers

pytestmark = pytest.mark.e2e
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class RenderedPage(HTMLParser):
    """Headings, table rows (cell texts and links) and images of a page, skipping script and style text."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, object]] = []  # ("h1", text), ("row", [(text, href)]), ("img", attrs)
        self._skip = 0
        self._heading: list[str] | None = None
        self._row: list[tuple[str, str | None]] | None = None
        self._cell: list[str] | None = None
        self._href: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "h1":
            self._heading = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell, self._href = [], None
        elif tag == "a" and self._cell is not None:
            self._href = attrs.get("href")
        elif tag == "img":
            self.events.append(("img", attrs))

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1
        elif tag == "h1" and self._heading is not None:
            self.events.append(("h1", "".join(self._heading).strip()))
            self._heading = None
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(("".join(self._cell).strip(), self._href))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.events.append(("row", self._row))
            self._row = None

    def handle_data(self, data):
        if self._skip:
            return
        for part in (self._heading, self._cell):
            if part is not None:
                part.append(data)


def render(report: Path, profile: Path) -> str:
    """The report's DOM after its scripts ran, from headless chromium."""
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium)")
    cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", report.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0 and proc.stdout, f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return proc.stdout


def verdict(claim: dict) -> str:
    """The verdict a reader must see: inconclusive as recorded, else pass only with a finite value."""
    if claim["verdict"] == "inconclusive":
        return "inconclusive"
    return "pass" if claim["verdict"] == "pass" and claim["ours"] is not None else "fails"


def expected_counts(claims_file: Path) -> tuple[str, str]:
    """Paper claims as 'P pass · F fail · I inconclusive' and checks as 'passed/total', counted straight
    from claims.json."""
    claims = json.loads(claims_file.read_text())["claims"]
    papers = [verdict(c) for c in claims if c["kind"] == "paper"]
    checks = [verdict(c) for c in claims if c["kind"] == "check"]
    paper_text = (
        f"{papers.count('pass')} pass · {papers.count('fails')} fail · {papers.count('inconclusive')} inconclusive"
    )
    return paper_text, f"{checks.count('pass')}/{len(checks)}"


def check_report(work: Path, profile: Path) -> None:
    """Everything the module docstring lists, for every paper enabled in ``work``'s config."""
    slugs = enabled_papers(yaml.safe_load((work / "config/config.yaml").read_text()))
    papers = load_papers(work / "resources/papers.yaml")
    dom = render(work / "results/report.html", profile)
    page = RenderedPage()
    page.feed(dom)
    headings = [i for i, (kind, text) in enumerate(page.events) if kind == "h1" and text == "Reproduction scoreboard"]
    assert headings, "landing page title not rendered"
    after = page.events[headings[0] + 1 :]
    rows = [value for kind, value in after[: 2 + len(slugs)] if kind == "row"]
    assert [text for text, _ in rows[0]] == ["paper", "paper claims", "checks", "scale", "results"], rows[:1]
    body = {cells[0][0]: cells for cells in rows[1:]}
    for slug in slugs:
        cells = body.get(papers[slug]["short"])
        assert cells, f"{slug}: no summary row right under the landing page title"
        paper_claims, checks = expected_counts(work / "results" / slug / "claims.json")
        assert [text for text, _ in cells[1:3]] == [paper_claims, checks], f"{slug}: {cells}"
        assert cells[4] == (slug, f"javascript:app.showCategory('{slug}')"), f"{slug}: category link {cells[4]}"
        images = [a for kind, a in after if kind == "img" and a.get("alt", "").startswith(f"{slug} figure ")]
        assert images, f"{slug}: no headline figure on the landing page"
        src = images[0]["src"]
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n", f"{slug}: figure is not a PNG"

    categories = json.loads(re.search(r"var categories = (\{.*?\});\n", dom).group(1))
    results = json.loads(re.search(r"var results = (\{.*?\});\n", dom).group(1))
    for slug in slugs:
        category = categories.get(slug, {})
        assert category.get("claims") == [f"results/{slug}/claims.html"], f"{slug}: {category}"
        assert category.get("provenance") == [f"results/{slug}/provenance.json"], f"{slug}: {category}"
        figures = category.get("figures", [])
        assert figures and all(f.endswith(".png") and results[f]["caption"].strip() for f in figures), slug
        check_claims_table(results[f"results/{slug}/claims.html"]["data_uri"], work / "results" / slug / "claims.json")


def check_claims_table(data_uri: str, claims_file: Path) -> None:
    """The claims table embedded in the report shows every claim's id, kind, statement and test text as
    written (a test such as ``|ours - 1| <= 0.1`` must not lose its bars) and its verdict."""
    table = RenderedPage()
    table.feed(base64.b64decode(data_uri.split("base64,", 1)[1]).decode())
    rows = {cells[0][0]: [text for text, _ in cells] for kind, cells in table.events if kind == "row"}
    for claim in json.loads(claims_file.read_text())["claims"]:
        cells = rows.get(claim["id"])
        assert cells, f"{claims_file}: claim {claim['id']} missing from the report's claims table"
        tags = [t for t in ("timing", "learning") if claim.get(t)]
        shown = verdict(claim)
        if shown == "inconclusive" and claim.get("inconclusive_because"):
            shown += f" ({' '.join(claim['inconclusive_because'])})"
        expected = [", ".join([claim["kind"], *tags]), claim["statement"], claim["test_text"], shown]
        assert [cells[1], cells[2], cells[6], cells[7]] == expected, f"{claim['id']}: {cells}"


def test_report_renders_summary_rows_and_figures_in_a_browser(default_run, tmp_path):
    check_report(default_run, tmp_path / "chromium-profile")


def test_results_site_opens_on_every_papers_row_unobstructed(default_run):
    """The landing page a reader opens first (results/index.html), measured by geometry, not text: at
    1280x800 and 1920x1080 the title, every enabled paper's name cell and the total lie inside the first
    viewport with nothing drawn over them (the element at each name cell's centre is that cell); one paper's
    first figure is visible after one scroll. The screenshots stay in results/report-screenshots/."""
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium)")
    snakemake_run(default_run, "--cores", "1", "report_screenshots")
    folder = default_run / "results/report-screenshots"
    geometry = json.loads((folder / "geometry.json").read_text())
    slugs = enabled_papers(yaml.safe_load((default_run / "config/config.yaml").read_text()))
    for size in ("1280x800", "1920x1080"):
        view = geometry["index"][size]
        assert (folder / f"index_{size}.png").stat().st_size > 10_000
        for what in ("title", "total"):
            assert view[what]["inside"] and view[what]["unobstructed"], f"{size}: {what} {view[what]}"
        assert sorted(view["rows"]) == sorted(slugs), f"{size}: rows {sorted(view['rows'])}"
        hidden = {slug: g for slug, g in view["rows"].items() if not (g["inside"] and g["unobstructed"])}
        assert not hidden, f"{size} (viewport {view['width']}x{view['height']}): rows not fully visible: {hidden}"
    paper = geometry["paper"]["1280x800"]
    assert paper["figure"] and paper["figure"]["loaded"] and paper["figure"]["after_one_scroll"], paper


@pytest.mark.parametrize(
    "slug", enabled_papers(yaml.safe_load((Path(__file__).resolve().parents[1] / "config/config.yaml").read_text()))
)
def test_every_figure_exists_and_is_not_blank(default_run, slug):
    """Each figure of the paper's figures rule exists and is not blank (the grey levels of its pixels vary:
    standard deviation above 2 of 255, as no empty canvas or single-colour image does), and every panel
    that plots data (not an image panel) names both axes (a label, a shared labelled axis, or category
    ticks) and, when it draws several labelled series, the figure has a legend (read from the audit
    repro.reporting.plotting.save writes into the PNG)."""
    import numpy as np
    from PIL import Image

    captions = sorted((default_run / "workflow/report" / slug).glob("*.rst"))
    assert captions, f"{slug}: no figure captions"
    for caption in captions:
        if caption.name in ("claims.rst", "provenance.rst", "scoreboard.rst"):
            continue
        png = default_run / "results" / slug / "figures" / f"{caption.stem}.png"
        assert png.is_file(), f"{slug}: {png.name} missing"
        picture = Image.open(png)
        grey = np.asarray(picture.convert("L"), dtype=float)
        assert grey.std() > 2.0, f"{slug}: {png.name} looks blank (pixel std {grey.std():.2f})"
        panels = json.loads(picture.text.get("repro-axes", "null"))
        assert panels is not None, f"{slug}: {png.name} was not written by repro.reporting.plotting.save"
        for i, panel in enumerate(panels):
            if panel["image"] or panel["empty"]:
                continue
            where = f"{slug}: {png.name} panel {i} ({panel['title'] or 'untitled'})"
            named = panel["x_named"] and panel["y_named"]
            assert named, (
                f"{where}: axes not named (labels {panel['xlabel']!r}, {panel['ylabel']!r}, no category ticks)"
            )
            assert panel["labelled_series"] < 2 or panel["legend"], f"{where}: several series and no legend"
