"""Gather every paper's ``claims.json`` into the scoreboard: CSV, Markdown, per-paper claims tables and
the report's landing page.

The two kinds of claim (``paper``: the paper's assertion measured on this run; ``check``: an identity or
implementation property) are counted apart everywhere, e.g. ``paper claims 3 pass · 1 fail · 2
inconclusive · checks 4/4``, because a check that holds by construction says nothing about the paper. A
paper claim is ``inconclusive`` when a learning check it rests on failed (the model did not train). A claim
whose value is missing or not finite shows ``n/a`` and counts as failed, unless it is inconclusive.

Text reaches three renderers: Markdown (GitHub), HTML (the per-paper claims tables) and reStructuredText
(the report's landing page, which Snakemake also passes through Jinja2). Each gets its own escaping so
that a test text such as ``|ours - 1| <= 0.1`` renders as written.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repro.reporting.claims import KINDS, VERDICTS
from repro.reporting.registry import load_papers
from repro.workflow.io import InputError, read_json, write_text

COLUMNS = [
    "paper",
    "claim",
    "kind",
    "statement",
    "paper_value",
    "ours",
    "interval_low",
    "interval_high",
    "interval_method",
    "interval_n",
    "scale",
    "test",
    "verdict",
    "timing",
    "learning",
    "inconclusive_because",
]
SUMMARY_COLUMNS = [
    "paper",
    "title",
    "paper_claims_passed",
    "paper_claims_failed",
    "paper_claims_inconclusive",
    "paper_claims_total",
    "checks_passed",
    "checks_total",
    "scale",
    "status",
]
NOT_BUILT = "not built yet"
NOT_RUN = "not run yet"
HEADLINE_WIDTH_PX = 720
# Snakemake's report centres its content pane, which holds our landing text beside a workflow graph of
# some 200 nodes: the pair, wider than the window, spilled left under the menu (at 1280x800 the table sat
# at x = -149..235). These rules (scoped to the report's content pane) align the pane to the top left,
# put the graph below the text, and keep the table compact. The first screen a reader should open is
# results/index.html (repro.reporting.site), which the landing page links first.
REPORT_CSS = (
    "div.grow.items-center.justify-center.h-screen { justify-content: flex-start; align-items: flex-start; } "
    "div.grow.flex.gap-3.p-3.items-start { flex-direction: column; } "
    "div.prose.max-w-lg { max-width: none; } "
    "div.prose table.docutils { font-size: 12px; margin: 0; width: auto; } "
    "div.prose table.docutils col { width: auto !important; } "
    "div.prose table.docutils td, div.prose table.docutils th { padding: 0 8px; white-space: nowrap; } "
    "div.prose h1.title { font-size: 20px; margin: 0 0 4px 0; }"
)


def fmt(value: Any) -> str:
    """A number as four significant digits, a missing or non-finite one as 'n/a', text as is."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return f"{value:.4g}" if math.isfinite(value) else "n/a"
    return str(value)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load_claims(path: str | Path) -> tuple[str, list[dict[str, Any]]]:
    """``(paper, claims)`` of one ``claims.json``; a claim without a known kind is an input error."""
    doc = read_json(path)
    if not isinstance(doc, dict) or "paper" not in doc or not isinstance(doc.get("claims"), list):
        raise InputError(path, "expected an object with 'paper' and a list 'claims'")
    for claim in doc["claims"]:
        for key in ("id", "statement", "scale", "test_text", "verdict"):
            if key not in claim:
                raise InputError(path, f"claim {claim.get('id', '?')!r} has no {key!r}")
        if claim.get("kind") not in KINDS:
            raise InputError(path, f"claim {claim['id']!r}: kind must be one of {KINDS}, got {claim.get('kind')!r}")
        if claim["verdict"] not in VERDICTS:
            raise InputError(
                path, f"claim {claim['id']!r}: verdict must be one of {VERDICTS}, got {claim['verdict']!r}"
            )
    return doc["paper"], doc["claims"]


def verdict_of(claim: Mapping[str, Any]) -> str:
    """The recorded verdict, except that a claim without a finite value fails (an inconclusive one stays
    inconclusive: the model it rests on did not learn, whatever its own number)."""
    if claim["verdict"] == "inconclusive":
        return "inconclusive"
    return "pass" if _finite(claim.get("ours")) and claim["verdict"] == "pass" else "fails"


def claim_row(paper: str, claim: Mapping[str, Any]) -> dict[str, str]:
    """One scoreboard row: every field as display text."""
    interval = claim.get("interval") or {}
    return {
        "paper": paper,
        "claim": claim["id"],
        "kind": claim["kind"],
        "statement": claim["statement"],
        "paper_value": fmt(claim.get("paper_value")),
        "ours": fmt(claim.get("ours")),
        "interval_low": fmt(interval["low"]) if interval else "",
        "interval_high": fmt(interval["high"]) if interval else "",
        "interval_method": interval.get("method", ""),
        "interval_n": str(interval["n"]) if interval else "",
        "scale": claim["scale"],
        "test": claim["test_text"],
        "verdict": verdict_of(claim),
        "timing": "true" if claim.get("timing") else "",
        "learning": "true" if claim.get("learning") else "",
        "inconclusive_because": " ".join(claim.get("inconclusive_because") or ()),
    }


def gather(claim_files: Iterable[str | Path]) -> list[dict[str, str]]:
    """One row per claim, in the order the files are given."""
    rows = []
    for path in claim_files:
        paper, claims = load_claims(path)
        rows += [claim_row(paper, c) for c in claims]
    return rows


def kind_text(row: Mapping[str, str]) -> str:
    """'paper', 'paper, timing' (a claim that times code, allowed to differ between runs), 'check, learning'."""
    tags = [tag for tag in ("timing", "learning") if row.get(tag)]
    return ", ".join([row["kind"], *tags])


def verdict_text(row: Mapping[str, str]) -> str:
    """The verdict; an inconclusive one names the learning checks that failed."""
    because = row.get("inconclusive_because")
    return f"{row['verdict']} ({because})" if row["verdict"] == "inconclusive" and because else row["verdict"]


def interval_text(row: Mapping[str, str]) -> str:
    """'[low, high] (method, n=N)', or '' for a claim without an interval."""
    if not row["interval_method"]:
        return ""
    return f"[{row['interval_low']}, {row['interval_high']}] ({row['interval_method']}, n={row['interval_n']})"


@dataclass(frozen=True)
class Summary:
    """Counts of one paper, by kind. ``state``: 'run' (it has claims), else NOT_RUN (its module exists
    but no claims were gathered, e.g. disabled) or NOT_BUILT (no module yet)."""

    slug: str
    state: str
    paper_passed: int = 0
    paper_failed: int = 0
    paper_inconclusive: int = 0
    checks_passed: int = 0
    checks_total: int = 0
    scale: str = ""

    @property
    def ran(self) -> bool:
        return self.state == "run"

    @property
    def paper_total(self) -> int:
        return self.paper_passed + self.paper_failed + self.paper_inconclusive

    @property
    def paper_claims(self) -> str:
        """'3 pass · 1 fail · 2 inconclusive' (all three counts, always)."""
        if not self.ran:
            return self.state
        return f"{self.paper_passed} pass · {self.paper_failed} fail · {self.paper_inconclusive} inconclusive"

    @property
    def checks(self) -> str:
        return f"{self.checks_passed}/{self.checks_total}" if self.ran else ""

    @property
    def status(self) -> str:
        return f"paper claims {self.paper_claims} · checks {self.checks}" if self.ran else self.state


def summarise(rows: list[Mapping[str, str]], slugs: Iterable[str], built: Iterable[str] = ()) -> dict[str, Summary]:
    """Per paper, passed/total for each kind; a paper with no rows is NOT_RUN if in ``built``, else NOT_BUILT."""
    built = set(built)
    out = {}
    for slug in slugs:
        mine = [r for r in rows if r["paper"] == slug]
        if not mine:
            out[slug] = Summary(slug, NOT_RUN if slug in built else NOT_BUILT)
            continue

        papers = [r["verdict"] for r in mine if r["kind"] == "paper"]
        checks = [r["verdict"] for r in mine if r["kind"] == "check"]
        scales = ", ".join(dict.fromkeys(r["scale"] for r in mine))
        out[slug] = Summary(
            slug,
            "run",
            papers.count("pass"),
            papers.count("fails"),
            papers.count("inconclusive"),
            checks.count("pass"),
            len(checks),
            scale=scales,
        )
    return out


def built_papers(root: str | Path, registry: Iterable[str]) -> list[str]:
    """Papers of the registry that have a module (a rule file) in the checkout at ``root``."""
    return [slug for slug in registry if (Path(root) / "workflow/rules" / f"{slug}.smk").is_file()]


def headline_figures(slugs: Iterable[str], rules: Any) -> dict[str, str]:
    """Each paper's first figure (the first PNG output of its ``<pkg>_figures`` rule), for the landing
    page; ``rules`` is the workflow's ``rules`` namespace. Papers without a figures rule are left out."""
    out = {}
    for slug in slugs:
        name = f"{slug.replace('-', '_')}_figures"
        pngs = [str(f) for f in getattr(rules, name).output if str(f).endswith(".png")] if rules.has(name) else []
        if pngs:
            out[slug] = pngs[0]
    return out


def label(paper: Mapping[str, Any]) -> str:
    """'Short: title', without repeating a short name the title already starts with."""
    title, short = paper["title"], paper["short"]
    return title if title.startswith(short) else f"{short}: {title}"


# --- CSV -------------------------------------------------------------------------------------------


def _csv(records: list[Mapping[str, Any]], columns: list[str]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buf.getvalue()


def to_csv(rows: list[Mapping[str, str]]) -> str:
    return _csv(rows, COLUMNS)


def summary_csv(summaries: Mapping[str, Summary], papers: Mapping[str, Mapping[str, Any]]) -> str:
    records = [
        {
            "paper": s.slug,
            "title": label(papers[s.slug]) if s.slug in papers else s.slug,
            "paper_claims_passed": s.paper_passed if s.ran else "",
            "paper_claims_failed": s.paper_failed if s.ran else "",
            "paper_claims_inconclusive": s.paper_inconclusive if s.ran else "",
            "paper_claims_total": s.paper_total if s.ran else "",
            "checks_passed": s.checks_passed if s.ran else "",
            "checks_total": s.checks_total if s.ran else "",
            "scale": s.scale,
            "status": s.status,
        }
        for s in summaries.values()
    ]
    return _csv(records, SUMMARY_COLUMNS)


def read_rows(scoreboard_csv: str | Path) -> list[dict[str, str]]:
    """Rows of a scoreboard CSV written by :func:`to_csv`; a CSV without the kind column is an input error."""
    with open(scoreboard_csv, newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("paper", "kind", "verdict") if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(scoreboard_csv, f"scoreboard columns {missing} missing (rerun the workflow)")
        return list(reader)


# --- Markdown --------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\|*_`<\[\]])")


def md_cell(text: str) -> str:
    """Markdown table cell showing ``text`` as written (pipes, emphasis and tag characters escaped)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def md_table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines) + "\n"


def claims_markdown(rows: list[Mapping[str, str]], with_paper: bool = True) -> str:
    """Claims table: id, kind, statement, paper value, ours, interval, test, verdict."""
    header = ["id", "kind", "statement", "paper value", "ours", "interval", "test", "verdict"]
    body = [
        [md_cell(r["claim"]), md_cell(kind_text(r))]
        + [md_cell(r[c]) for c in ("statement", "paper_value", "ours")]
        + [md_cell(interval_text(r)), md_cell(r["test"]), md_cell(verdict_text(r))]
        for r in rows
    ]
    if with_paper:
        header = ["paper"] + header
        body = [[md_cell(r["paper"])] + b for r, b in zip(rows, body)]
    return md_table(header, body)


def summary_markdown(summaries: Mapping[str, Summary], papers: Mapping[str, Mapping[str, Any]]) -> str:
    body = [
        [f"`{s.slug}`", md_cell(label(papers[s.slug])), s.paper_claims, s.checks, s.scale] for s in summaries.values()
    ]
    return md_table(["slug", "paper", "paper claims", "checks", "scale"], body)


# --- HTML (per-paper claims tables in the report) ---------------------------------------------------

_HTML_STYLE = """
body { font-family: system-ui, sans-serif; font-size: 14px; margin: 1.5em; color: #1e293b; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #cbd5e1; padding: 6px 8px; text-align: left; vertical-align: top; }
th { background: #f1f5f9; }
td.num, td.test { font-family: ui-monospace, monospace; white-space: nowrap; }
td.fails { color: #b91c1c; font-weight: 600; }
td.pass { color: #15803d; font-weight: 600; }
td.inconclusive { color: #a16207; font-weight: 600; }
"""


def claims_html(paper: Mapping[str, Any], summary: Summary, rows: list[Mapping[str, str]]) -> str:
    """A stand-alone page with one paper's claims (every text HTML-escaped, so it shows as written)."""
    header = ["id", "kind", "statement", "paper value", "ours", "interval", "test", "verdict"]
    esc = html.escape
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(paper['short'])}: claims</title><style>{_HTML_STYLE}</style></head><body>",
        f"<h1>{esc(label(paper))}</h1>",
        f"<p>{esc(summary.status)} (scale: {esc(summary.scale)})</p>",
        "<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in header) + "</tr></thead><tbody>",
    ]
    for r in rows:
        cells = [
            ("", r["claim"]),
            ("", kind_text(r)),
            ("", r["statement"]),
            ("", r["paper_value"]),
            ("num", r["ours"]),
            ("num", interval_text(r)),
            ("test", r["test"]),
            (r["verdict"], verdict_text(r)),
        ]
        lines.append(
            "<tr>"
            + "".join(f'<td class="{cls}">{esc(text)}</td>' if cls else f"<td>{esc(text)}</td>" for cls, text in cells)
            + "</tr>"
        )
    lines += ["</tbody></table>", "</body></html>"]
    return "\n".join(lines) + "\n"


# --- reStructuredText (the report's landing page) ---------------------------------------------------

_RST_SPECIAL = re.compile(r"([\\`*_|<>\[\]:])")


def rst_text(text: str) -> str:
    """Inline reStructuredText showing ``text`` as written: markup characters backslash-escaped."""
    return _RST_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def _png_data_uri_lines(path: str | Path, width_px: int = HEADLINE_WIDTH_PX) -> list[str]:
    """A PNG as a data URI, scaled down to ``width_px`` so the landing page stays light, in lines short
    enough for docutils (whose line-length limit a one-line URI exceeds; the image directive joins them)."""
    from PIL import Image

    buf = io.BytesIO()
    with Image.open(path) as picture:
        picture.thumbnail((width_px, 10 * width_px))
        picture.save(buf, format="PNG", optimize=True)
    uri = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    return [uri[i : i + 76] for i in range(0, len(uri), 76)]


def landing_page(
    summaries: Mapping[str, Summary],
    papers: Mapping[str, Mapping[str, Any]],
    headline: Mapping[str, str | Path],
) -> str:
    """The report's global description: at the top one row per enabled paper (paper, paper claims,
    checks, scale, link to its category), then one headline figure per paper linking to its category.

    ``paper_`` style references resolve to Snakemake's category links (``app.showCategory``), which the
    report appends to this text. Everything is inside a Jinja2 raw block, so braces in names stay text.
    """
    out = [
        "{% raw %}",
        "Reproduction scoreboard",
        "=======================",
        "",
        "The results site, `index.html <index.html>`_ beside this report, opens on the same scoreboard with",
        "one page per paper (claims, figures, provenance).",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - paper",
        "     - paper claims",
        "     - checks",
        "     - scale",
        "     - results",
    ]
    for s in sorted(summaries.values(), key=lambda s: str(papers[s.slug]["short"]).lower()):
        out += [
            f"   * - {rst_text(papers[s.slug]['short'])}",
            f"     - {s.paper_claims}",
            f"     - {s.checks}",
            f"     - {rst_text(s.scale)}",
            f"     - `{s.slug}`_",
        ]
    out += [
        "",
        "*Paper claims* are the papers' assertions about their methods, measured on this run; each can fail",
        "(a unit test shows it failing on a counterfactual). *Checks* are identities and implementation",
        "properties that hold by construction. A claim without a finite value counts as failed. Each link",
        "opens the paper's category (also under Results in the menu): its claims table, its figures with",
        "captions and its provenance. The Scoreboard_ category has every claim in one table",
        "(``scoreboard.csv``) and the counts per paper (``scoreboard_papers.csv``).",
        "",
        "Headline figures",
        "----------------",
        "",
    ]
    for slug, path in headline.items():
        short = rst_text(papers[slug]["short"])
        first, *rest = _png_data_uri_lines(path)
        out += (
            [f".. figure:: {first}"]
            + [f"   {line}" for line in rest]
            + [
                f"   :target: {slug}_",
                f"   :alt: {slug} figure {Path(path).stem}",
                "   :width: 100%",
                "",
                f"   {short}: {rst_text(Path(path).stem)}",
                "",
            ]
        )
    out += [".. raw:: html", "", f"   <style>{REPORT_CSS}</style>", "", "{% endraw %}"]
    return "\n".join(out) + "\n"


def main(job) -> None:
    """Rule entry: claims files in; scoreboard CSVs, Markdown, landing page and claims tables out."""
    rows = gather(job.input.claims)
    registry = load_papers(job.input.papers)
    enabled = list(job.params.papers)
    summaries = summarise(rows, enabled)
    everyone = summarise(rows, list(registry), built=job.params.built)
    write_text(job.output.csv, to_csv(rows))
    write_text(job.output.papers_csv, summary_csv(everyone, registry))
    write_text(
        job.output.md,
        "## Papers\n\n" + summary_markdown(everyone, registry) + "\n## Claims\n\n" + claims_markdown(rows),
    )
    write_text(job.output.rst, landing_page(summaries, registry, dict(job.params.headline)))
    for slug, path in dict(job.params.tables).items():
        mine = [r for r in rows if r["paper"] == slug]
        write_text(path, claims_html(registry[slug], summaries[slug], mine))
