"""Gather every paper's ``claims.json`` into one table (CSV, Markdown, and the report's landing page)."""

from __future__ import annotations

import argparse
import csv
import io
import re
from pathlib import Path
from typing import Any

from repro.io import read_json, write_text
from repro.registry import PAPERS_FILE, load_papers

COLUMNS = ["paper", "claim", "statement", "paper_value", "ours", "scale", "test", "verdict"]
README_BEGIN = "<!-- papers-table:begin -->"
README_END = "<!-- papers-table:end -->"


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def gather(claim_files: list[str | Path]) -> list[dict[str, str]]:
    """One row per claim, in the order the files are given."""
    rows = []
    for path in claim_files:
        doc = read_json(path)
        for c in doc["claims"]:
            rows.append(
                {
                    "paper": doc["paper"],
                    "claim": c["id"],
                    "statement": c["statement"],
                    "paper_value": _fmt(c.get("paper_value")),
                    "ours": _fmt(c.get("ours")),
                    "scale": c["scale"],
                    "test": c["test_text"],
                    "verdict": c["verdict"],
                }
            )
    return rows


def to_csv(rows: list[dict[str, str]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def to_markdown(rows: list[dict[str, str]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cell(r[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def to_rst(rows: list[dict[str, str]], papers: dict[str, dict]) -> str:
    """Landing page of the HTML report: the scoreboard and each paper's status."""

    def cell(text: str) -> str:
        return text.replace("\n", " ").replace("|", "/")

    out = [
        "Reproduction scoreboard",
        "=======================",
        "",
        f"{sum(r['verdict'] == 'pass' for r in rows)} of {len(rows)} checked claims pass.",
        "Smoke-scale claims are direction-of-effect or exact-property checks on embedded data;",
        "full-scale claims compare with the paper's numbers. Figures sit under each paper's category.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
    ]
    for _i, row in enumerate([dict(zip(COLUMNS, COLUMNS))] + rows):
        out.append("   * - " + cell(row[COLUMNS[0]]))
        out += [f"     - {cell(row[c])}" for c in COLUMNS[1:]]
    out += ["", "Paper status", "------------", "", status_table(rows, papers, fmt="rst")]
    return "\n".join(out) + "\n"


def paper_status(rows: list[dict[str, str]], papers: dict[str, dict]) -> dict[str, str]:
    """'k/n claims pass' for papers on the scoreboard, 'not built yet' otherwise."""
    status = {}
    for slug in papers:
        mine = [r for r in rows if r["paper"] == slug]
        if mine:
            passed = sum(r["verdict"] == "pass" for r in mine)
            status[slug] = f"{passed}/{len(mine)} claims pass"
        else:
            status[slug] = "not built yet"
    return status


def _label(paper: dict) -> str:
    title, short = paper["title"], paper["short"]
    return title if title.startswith(short) else f"{short}: {title}"


def status_table(rows: list[dict[str, str]], papers: dict[str, dict], fmt: str = "md") -> str:
    status = paper_status(rows, papers)
    if fmt == "md":
        lines = ["| slug | paper | status |", "|---|---|---|"]
        lines += [f"| `{s}` | {_label(p)} | {status[s]} |" for s, p in papers.items()]
        return "\n".join(lines) + "\n"
    lines = [".. list-table::", "   :header-rows: 1", "", "   * - slug", "     - paper", "     - status"]
    for s, p in papers.items():
        lines += [f"   * - {s}", f"     - {p['short']}", f"     - {status[s]}"]
    return "\n".join(lines) + "\n"


def main(job) -> None:
    """Rule entry: claims files in, scoreboard CSV/Markdown/RST out."""
    rows = gather(list(job.input.claims))
    papers = load_papers(job.input.papers)
    write_text(job.output.csv, to_csv(rows))
    write_text(job.output.md, to_markdown(rows) + "\n## Paper status\n\n" + status_table(rows, papers))
    write_text(job.output.rst, to_rst(rows, papers))


def update_readme(readme: Path, scoreboard_csv: Path, papers_file: Path = PAPERS_FILE) -> None:
    """Rewrite the README's paper table from a scoreboard CSV (``python -m repro.scoreboard``)."""
    rows = list(csv.DictReader(scoreboard_csv.open())) if scoreboard_csv.exists() else []
    table = status_table(rows, load_papers(papers_file))
    text = readme.read_text()
    pattern = re.compile(re.escape(README_BEGIN) + ".*?" + re.escape(README_END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{readme}: markers {README_BEGIN} ... {README_END} not found")
    readme.write_text(pattern.sub(lambda _: f"{README_BEGIN}\n{table}{README_END}", text))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Update the README's paper table from results/scoreboard.csv")
    parser.add_argument("--readme", type=Path, default=Path("README.md"))
    parser.add_argument("--scoreboard", type=Path, default=Path("results/scoreboard.csv"))
    args = parser.parse_args()
    update_readme(args.readme, args.scoreboard)
