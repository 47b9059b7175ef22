"""The results site a reader opens first: ``results/index.html`` (the scoreboard) and one page per paper.

Why beside Snakemake's report: the report's landing page puts its workflow graph beside our text and
centres the pair, so at a laptop's 1280x800 the scoreboard slid under the menu and off screen. These pages
are plain HTML with their own small stylesheet, so what a reader sees is ours to decide and to test
(tests/test_report_browser.py measures it in Chromium):

- the index fits the first screen at 1280x800: title, one line per enabled paper (name, paper claims
  pass / fail / inconclusive, checks, scale) and the total, each name linking to the paper's page;
- a paper's page starts with its claims table (the paper's value beside ours, the interval, the verdict
  coloured), then its figures with their captions, then its provenance (commit, seed, data manifests).

Every text is HTML-escaped; figures are linked by relative path, so the folder can be copied whole.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from repro.reporting.scoreboard import Summary, interval_text, kind_text, verdict_text

STYLE = """
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1e293b; margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 10px 20px 16px; }
header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; }
h1 { font-size: 19px; margin: 4px 0; }
h2 { font-size: 16px; margin: 18px 0 6px; }
nav a, header a { color: #0f766e; }
p.note { font-size: 12px; color: #475569; margin: 2px 0 6px; }
table { border-collapse: collapse; font-size: 13.5px; }
div.columns { display: flex; flex-wrap: wrap; gap: 12px 28px; align-items: flex-start; }
table.board { flex: 1 1 540px; }
th, td { text-align: left; padding: 0 8px; border-bottom: 1px solid #e2e8f0; line-height: 20px; }
th { background: #f1f5f9; position: sticky; top: 0; }
table.board td.name { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 240px; }
table.board td.count, table.board th.count { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.board tr.total td { font-weight: 600; border-top: 2px solid #94a3b8; }
table.board col.count { width: 62px; } table.board col.scale { width: 64px; }
table.board th.group { text-align: center; border-bottom: 1px solid #cbd5e1; }
table.board thead tr:nth-child(2) th { top: 20px; }
table.claims { width: 100%; table-layout: fixed; }
table.claims td { vertical-align: top; padding: 3px 6px; line-height: 1.35; overflow-wrap: anywhere; }
table.claims td.num, table.claims td.test { font-family: ui-monospace, monospace; font-size: 11.5px; }
table.claims td.quote { font-size: 11.5px; color: #475569; }
col.claim { width: 15%; } col.kind { width: 6%; } col.statement { width: 33%; } col.paper { width: 13%; }
col.ours { width: 7%; } col.interval { width: 11%; } col.test { width: 8%; } col.verdict { width: 7%; }
.pass { color: #15803d; font-weight: 600; }
.fails { color: #b91c1c; font-weight: 600; }
.inconclusive { color: #a16207; font-weight: 600; }
figure { margin: 14px 0 22px; }
figure img { max-width: 100%; border: 1px solid #e2e8f0; }
figcaption { font-size: 13px; color: #334155; max-width: 900px; }
pre { font-size: 12px; background: #f8fafc; padding: 8px; overflow-x: auto; }
"""


def _page(title: str, body: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>",
            "<body><main>",
            *body,
            "</main></body></html>",
        ]
    )


def _counts(s: Summary) -> list[str]:
    """Cells: paper claims passed, failed, inconclusive (coloured where non-zero), checks."""
    if not s.ran:
        return [f'<td class="count" colspan="3">{html.escape(s.state)}</td>', '<td class="count"></td>']
    cells = []
    for value, css in ((s.paper_passed, "pass"), (s.paper_failed, "fails"), (s.paper_inconclusive, "inconclusive")):
        cls = f"count {css}" if value else "count"
        cells.append(f'<td class="{cls}">{value}</td>')
    return cells + [f'<td class="count">{s.checks_passed}/{s.checks_total}</td>']


def _board(rows: list[str]) -> list[str]:
    """One column of the scoreboard: a table with the header and ``rows``."""
    return [
        '<table class="board"><colgroup><col><col class="count"><col class="count"><col class="count"><col class="count">'
        '<col class="scale"></colgroup><thead><tr><th rowspan="2">paper</th><th colspan="3" class="group">paper claims</th>'
        '<th rowspan="2" class="count">checks</th><th rowspan="2">scale</th></tr><tr><th class="count">pass</th>'
        '<th class="count">fail</th><th class="count">inconclusive</th></tr></thead><tbody>',
        *rows,
        "</tbody></table>",
    ]


def index_page(summaries: Mapping[str, Summary], papers: Mapping[str, Mapping[str, Any]], report: str) -> str:
    """The scoreboard: one line per paper and the total, each name linking to ``site/<slug>.html``."""
    esc = html.escape
    total = Summary(
        "total",
        "run",
        sum(s.paper_passed for s in summaries.values()),
        sum(s.paper_failed for s in summaries.values()),
        sum(s.paper_inconclusive for s in summaries.values()),
        sum(s.checks_passed for s in summaries.values()),
        sum(s.checks_total for s in summaries.values()),
    )
    ordered = sorted(summaries.items(), key=lambda item: str(papers.get(item[0], {}).get("short", item[0])).lower())
    rows = []
    for slug, s in ordered:
        name = esc(papers[slug]["short"]) if slug in papers else esc(slug)
        title = esc(papers[slug]["title"]) if slug in papers else ""
        rows.append(
            f'<tr id="row-{esc(slug)}"><td class="name"><a href="site/{esc(slug)}.html" title="{title}">{name}</a>'
            f"</td>{''.join(_counts(s))}<td>{esc(s.scale)}</td></tr>"
        )
    total_row = f'<tr class="total"><td class="name">total ({len(summaries)} papers)</td>{"".join(_counts(total))}<td></td></tr>'
    half = (len(rows) + 1) // 2
    body = [
        "<header><h1>Reproduction scoreboard</h1>",
        f'<nav><a href="{esc(report)}">Snakemake report</a> · <a href="scoreboard.csv">scoreboard.csv</a></nav></header>',
        '<p class="note">Paper claims: the papers\' assertions measured on this run (each can fail); inconclusive: a '
        "model it rests on did not learn. Checks: identities and implementation properties.</p>",
        '<div class="columns">',
        *_board(rows[:half]),
        *_board(rows[half:] + [total_row]),
        "</div>",
    ]
    return _page("Reproduction scoreboard", body)


def _claims_tables(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """The paper claims' table, then the checks' table folded (a reader comes for the paper's claims; the
    checks, identities and learning checks, are one click away), so the figures start on the second screen."""
    paper = [r for r in rows if r["kind"] == "paper"]
    checks = [r for r in rows if r["kind"] != "paper"]
    passed = sum(r["verdict"] == "pass" for r in checks)
    out = _claims_table(paper) if paper else []
    if checks:
        out += [
            f"<details><summary>Checks: {passed} of {len(checks)} pass (identities, implementation properties and"
            " the learning checks the paper claims rest on)</summary>",
            *_claims_table(checks),
            "</details>",
        ]
    return out


def _claims_table(rows: Sequence[Mapping[str, str]]) -> list[str]:
    esc = html.escape
    head = ["claim", "kind", "statement", "paper", "ours", "interval", "test", "verdict"]
    out = [
        '<table class="claims"><colgroup>'
        + "".join(f'<col class="{h}">' for h in head)
        + "</colgroup><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
    ]
    for r in sorted(rows, key=lambda r: r["kind"] != "paper"):
        numeric = r["paper_value"].replace(".", "", 1).replace("-", "", 1).replace("e", "", 1).isdigit()
        cells = [
            ("", r["claim"]),
            ("", kind_text(r)),
            ("", r["statement"]),
            ("num" if numeric else "quote", r["paper_value"]),
            ("num", r["ours"]),
            ("num", interval_text(r)),
            ("test", r["test"]),
            (r["verdict"], verdict_text(r)),
        ]
        out.append("<tr>" + "".join(f'<td class="{c}">{esc(t)}</td>' for c, t in cells) + "</tr>")
    return out + ["</tbody></table>"]


def _provenance(doc: Mapping[str, Any]) -> list[str]:
    code = doc.get("code", {})
    manifests = doc.get("data_manifests", {})
    summary = {
        "commit": code.get("commit"),
        "dirty": code.get("dirty"),
        "seed": doc.get("config", {}).get("seed"),
        "scale": doc.get("config", {}).get("scale"),
        "python": doc.get("python"),
        "data": {
            name: {k: m.get(k) for k in ("source", "producer", "licence") if k in m} for name, m in manifests.items()
        },
    }
    return [f"<pre>{html.escape(json.dumps(summary, indent=2, default=str))}</pre>"]


def paper_page(
    slug: str,
    paper: Mapping[str, Any],
    summary: Summary,
    rows: Sequence[Mapping[str, str]],
    figures: Sequence[tuple[str, str]],
    provenance: Mapping[str, Any],
) -> str:
    """One paper: status, claims table, figures (``(relative png path, caption)``) and provenance."""
    esc = html.escape
    body = [
        f"<header><h1>{esc(paper.get('title', slug))}</h1>",
        '<nav><a href="../index.html">scoreboard</a></nav></header>',
        f'<p class="note">{esc(summary.status)} (scale: {esc(summary.scale)})</p>',
        "<h2>Claims</h2>",
        *_claims_tables(rows),
        "<h2>Figures</h2>",
    ]
    for src, caption in figures:
        body.append(
            f'<figure><img src="{esc(src)}" alt="{esc(Path(src).stem)}"><figcaption><b>{esc(Path(src).stem)}</b>: '
            f"{esc(caption)}</figcaption></figure>"
        )
    body += ["<h2>Provenance</h2>", *_provenance(provenance)]
    return _page(f"{paper.get('short', slug)}: results", body)


def main(job) -> None:
    """Rule entry: the scoreboard CSV, provenance files, figures and captions in; the site out."""
    from repro.reporting.registry import load_papers
    from repro.reporting.scoreboard import read_rows, summarise
    from repro.workflow.io import read_json, write_text

    rows = read_rows(job.input.scoreboard)
    registry = load_papers(job.input.papers)
    slugs = list(job.params.papers)
    summaries = summarise(rows, slugs)
    index = Path(job.output.index)
    write_text(index, index_page(summaries, registry, job.params.report))
    provenance = dict(zip(slugs, job.input.provenance, strict=True))
    for slug, page in dict(job.params.pages).items():
        figures = [
            (Path("..") / Path(png).relative_to(index.parent), Path(rst).read_text().strip())
            for png, rst in job.params.figures[slug]
        ]
        mine = [r for r in rows if r["paper"] == slug]
        text = paper_page(
            slug, registry[slug], summaries[slug], mine, [(str(p), c) for p, c in figures], read_json(provenance[slug])
        )
        write_text(page, text)
