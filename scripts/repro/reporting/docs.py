"""Regenerate the numbers in the documentation from a run, so that no page carries hand-copied results.

``python -m repro.reporting.docs`` (from the repo root, after a run) rewrites:

- the README's paper table (between ``<!-- papers-table:begin -->`` and ``<!-- papers-table:end -->``)
  from ``results/scoreboard.csv``: per paper its paper claims and checks passed/total and its target
  command;
- in every ``docs/papers/<slug>.md``, the block between ``<!-- results:begin -->`` and
  ``<!-- results:end -->`` from ``results/<slug>/claims.json``, the block between
  ``<!-- budget:begin -->`` and ``<!-- budget:end -->`` from ``results/benchmarks/<slug>/*.tsv``, and the
  block between ``<!-- paper-scale:begin -->`` and ``<!-- paper-scale:end -->`` from
  ``resources/<slug>/paper_scale.yaml`` (the data to obtain), ``benchmarks/results/full_scale_cost.json``
  (each stage's predicted cost at full.yaml's sizes) and ``benchmarks/results/rehearsal.json`` (the
  verdicts of the claims that run only at paper scale, in the last rehearsal).

A page whose paper has no results (or no benchmarks) in this checkout keeps its block as it is, so
running one paper does not erase the others' tables. A file without its markers is an error naming
the file and the marker.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from repro.reporting.registry import load_papers
from repro.reporting.scoreboard import (
    built_papers,
    claim_row,
    claims_markdown,
    fmt,
    load_claims,
    md_cell,
    md_table,
    read_rows,
    summarise,
)
from repro.workflow.entry import USAGE_LINE, logged_usage
from repro.workflow.io import InputError

# what an unresolved row of the cost table means (benchmarks/full_scale_cost.py: RESOLVED_SPAN, the noise)
UNRESOLVED_LEGEND = (
    "*unresolved*: the measured sizes do not determine how the stage grows (noise of a few per cent on its "
    "measured points moves the prediction by more than 4x). Where even the top of that range fits the request, "
    "the row shows the top (*yes, at the top of its noise range*); otherwise it shows the low end, a need the "
    "stage has at least, and only that is held to the request. A GPU stage without a work model takes "
    "its time from its CPU seconds at rehearsal sizes, mostly Python and start-up, and a size that is no config "
    "key (the files in a user's folder) stays at the fixture's count: plan such stages from the paper's own figures."
)
# what the work-model table of a GPU training stage shows (benchmarks/full_scale_cost.py, repro.learning.step_cost)
WORK_LEGEND = (
    "GPU training stages are costed from their step at full.yaml's sizes (the paper's `gpu_probe`, counted on "
    "the meta device: FLOPs and the peak of live tensors over forward and backward) times the samples a job "
    "passes through it; time at the device's planned rate (`slurm/partitions.yaml`), memory = weights, AdamW "
    "moments, that peak and the CUDA context."
)
README_BEGIN, README_END = "<!-- papers-table:begin -->", "<!-- papers-table:end -->"
RESULTS_BEGIN, RESULTS_END = "<!-- results:begin -->", "<!-- results:end -->"
BUDGET_BEGIN, BUDGET_END = "<!-- budget:begin -->", "<!-- budget:end -->"
SCALE_BEGIN, SCALE_END = "<!-- paper-scale:begin -->", "<!-- paper-scale:end -->"
COST_FILE = Path("benchmarks/results/full_scale_cost.json")
REHEARSAL_FILE = Path("benchmarks/results/rehearsal.json")


def replace_block(text: str, begin: str, end: str, body: str, where: str | Path) -> str:
    """``text`` with what stands between the markers ``begin`` and ``end`` replaced by ``body``."""
    for marker in (begin, end):
        if text.count(marker) != 1:
            found = "missing" if marker not in text else f"found {text.count(marker)} times"
            raise InputError(where, f"marker {marker} {found} (expected exactly once)")
    if text.index(begin) > text.index(end):
        raise InputError(where, f"marker {end} comes before {begin}")
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    return pattern.sub(lambda _: f"{begin}\n{body.rstrip()}\n{end}", text)


def target_command(slug: str) -> str:
    """The command that runs one paper (rule names spell '-' as '_')."""
    return f"snakemake --cores all {slug.replace('-', '_')}"


def readme_table(rows: list[Mapping[str, str]], papers: Mapping[str, Mapping], root: Path) -> str:
    """One row per registry paper: paper (linked to its docs page), paper claims, checks, command."""
    summaries = summarise(rows, list(papers), built=built_papers(root, papers))
    body = []
    for slug, s in summaries.items():
        short = md_cell(papers[slug]["short"])
        page = root / "docs/papers" / f"{slug}.md"
        name = f"[{short}](docs/papers/{slug}.md)" if page.is_file() else short
        command = f"`{target_command(slug)}`" if s.state != "not built yet" else ""
        body.append([name, s.paper_claims, s.checks, command])
    return md_table(["paper", "paper claims", "checks", "run it"], body)


def results_block(claims_file: Path, shown: str) -> str:
    """The paper's counts and claims table (id, kind, statement, paper value, ours, interval, test,
    verdict); ``shown`` is how the text names the file."""
    paper, claims = load_claims(claims_file)
    rows = [claim_row(paper, c) for c in claims]
    summary = summarise(rows, [paper])[paper]
    head = f"Generated from `{shown}` by `python -m repro.reporting.docs`: {summary.status} (scale: {summary.scale})."
    return head + "\n\n" + claims_markdown(rows, with_paper=False)


def _mean(values: list[str]) -> float:
    """Mean of numeric text; 'NA' (a value the platform could not measure) makes it NaN."""
    try:
        return float(np.mean([float(v) for v in values]))
    except ValueError:
        return math.nan


def read_benchmark(path: Path) -> dict[str, float]:
    """Wall s, CPU s and max RSS MB of one Snakemake benchmark file (mean over its repeats; 'NA' -> NaN)."""
    with path.open(newline="") as fh:
        records = list(csv.DictReader(fh, delimiter="\t"))
    missing = [c for c in ("s", "cpu_time", "max_rss") if records and c not in records[0]]
    if not records or missing:
        raise InputError(path, f"not a Snakemake benchmark file (no rows, or columns {missing} missing)")
    return {
        "wall": _mean([r["s"] for r in records]),
        "cpu": _mean([r["cpu_time"] for r in records]),
        "rss": _mean([r["max_rss"] for r in records]),
    }


def budget_block(bench_dir: Path, shown: str, log_dir: Path | None = None) -> str:
    """Per step wall s, CPU s and max RSS MB, and the paper's totals (sums; the largest RSS; NaN, shown
    as n/a, where a step was not measured); ``shown`` is how the text names the folder.

    CPU and peak memory come from each step's log in ``log_dir`` where it reports them (the stage process's
    getrusage): Snakemake's benchmark samples CPU every 0.5 s for 15 s, then every 30 s, and keeps the
    last sample, so it undercounts steps of 20 to 45 s.
    """
    steps = {p.stem: read_benchmark(p) for p in sorted(bench_dir.glob("*.tsv"))}
    # A stage eligible for Snakemake's between-workflow cache has no benchmark file (Snakemake refuses both on one
    # rule): its log's "done in" line gives its wall time, CPU and peak memory.
    for log in sorted(log_dir.glob("*.log")) if log_dir is not None and log_dir.is_dir() else []:
        found = USAGE_LINE.findall(log.read_text(errors="replace")) if log.stem not in steps else []
        if found and log.stem != "provenance":
            steps[log.stem] = {"wall": float(found[-1][0]), "cpu": np.nan, "rss": np.nan}
    steps = dict(sorted(steps.items()))
    if not steps:
        raise InputError(bench_dir, "no benchmark files (*.tsv)")
    # A stage eligible for the between-workflow cache has no benchmark file (Snakemake refuses both on one
    # rule): its log's last "done in" line gives its wall time (inside the stage), CPU and peak memory.
    for log in sorted(log_dir.glob("*.log")) if log_dir is not None else []:
        found = USAGE_LINE.findall(log.read_text(errors="replace"))
        if log.stem not in steps and found:
            wall, cpu, rss = (float(v) for v in found[-1])
            steps[log.stem] = {"wall": wall, "cpu": cpu, "rss": rss}
    steps = dict(sorted(steps.items()))
    for name, bench in steps.items():
        usage = logged_usage(log_dir / f"{name}.log") if log_dir is not None else None
        if usage is not None:
            bench["cpu"], bench["rss"] = usage[0], max(usage[1], np.nan_to_num(bench["rss"]))
    body = [[md_cell(name), fmt(b["wall"]), fmt(b["cpu"]), fmt(b["rss"])] for name, b in steps.items()]
    walls, cpus, rss = (np.array([b[key] for b in steps.values()]) for key in ("wall", "cpu", "rss"))
    body.append(["**total**", fmt(float(np.sum(walls))), fmt(float(np.sum(cpus))), fmt(float(np.max(rss)))])
    head = (
        f"Generated from `{shown}/*.tsv` and the steps' logs by `python -m repro.reporting.docs` (the last run's "
        "benchmark files, with CPU and peak memory as each step's process reported them in its log; the "
        "total wall time is a sum over jobs, which may run in parallel)."
    )
    return head + "\n\n" + md_table(["step", "wall s", "CPU s", "max RSS MB"], body)


def paper_scale_block(slug: str, root: Path) -> str:
    """What a user knows before submitting paper scale: the data to obtain (where, size, the config key
    that points at it), the predicted cost per stage and the rehearsal's verdicts of the paper-scale claims."""
    import yaml

    lines = [
        f"Generated by `python -m repro.reporting.docs` from `resources/{slug}/paper_scale.yaml`, "
        "`benchmarks/results/full_scale_cost.json` and `benchmarks/results/rehearsal.json`.",
        "",
        f"Run: `snakemake --profile slurm --configfile config/full.yaml {slug.replace('-', '_')}`.",
        "",
        "**Data to obtain** (a missing file stops the run before any job starts, naming it):",
        "",
    ]
    spec_file = root / "resources" / slug / "paper_scale.yaml"
    data = (yaml.safe_load(spec_file.read_text()) or {}).get("data", []) if spec_file.is_file() else None
    if data is None:
        lines.append(f"(no `resources/{slug}/paper_scale.yaml` yet)")
    elif not data:
        lines.append("None: paper scale generates its data (simulators) or downloads it by itself.")
    else:
        body = [
            [
                md_cell(d.get("name", "")),
                md_cell(d.get("where", "")),
                md_cell(d.get("size", "")),
                f"`{md_cell(d.get('config_key', ''))}`",
                md_cell(d.get("licence", "")),
            ]
            for d in data
        ]
        lines.append(md_table(["dataset", "where", "size", "config key", "licence"], body).rstrip())
    lines += ["", "**Predicted cost per stage** (at full.yaml's sizes, against what the stage requests):", ""]
    cost_file = root / COST_FILE
    stages = [
        r for r in (json.loads(cost_file.read_text())["stages"] if cost_file.is_file() else []) if r["paper"] == slug
    ]
    if stages:
        body = [
            [
                md_cell(r["stage"]),
                fmt(r.get("cpu_hours")),
                fmt(r.get("gpu_hours")),
                f"{r['peak_mb']:,}",
                f"{r['mem_mb']:,}",
                f"{r['runtime_min']:,}",
                md_cell(r.get("within", "")),
            ]
            for r in stages
        ]
        header = ["stage", "CPU-hours", "GPU-hours", "peak MB", "requests MB", "requests min", "within request"]
        lines.append(md_table(header, body).rstrip())
        if any(not r.get("resolved", True) for r in stages):
            lines += ["", UNRESOLVED_LEGEND]
        worked = [r for r in stages if r.get("work")]
        if worked:
            body = [
                [
                    md_cell(r["stage"]),
                    f"{r['work']['samples']:,}",
                    f"{r['flops']:.2e}",
                    md_cell(r["work"]["precision"]),
                    f"{r['wall_min_per_job']:,.0f}",
                    f"{r['device_mb']:,}",
                ]
                for r in worked
            ]
            header = ["stage", "samples per job", "FLOPs per job", "precision", "GPU min per job", "device MB"]
            lines += ["", md_table(header, body).rstrip(), "", WORK_LEGEND]
    else:
        lines.append("(not measured yet: `python benchmarks/full_scale_cost.py`)")
    lines += ["", "**Claims that run only at paper scale**, with their verdicts in the last rehearsal:", ""]
    rehearsal_file = root / REHEARSAL_FILE
    claims = json.loads(rehearsal_file.read_text())["papers"].get(slug) if rehearsal_file.is_file() else None
    if claims is None:
        lines.append("(no rehearsal recorded yet: `python benchmarks/rehearsal.py`)")
    else:
        only_full = [c for c in claims if c.get("full_only")]
        body = [[md_cell(c["id"]), md_cell(c["kind"]), fmt(c.get("ours")), md_cell(c["verdict"])] for c in only_full]
        lines.append(md_table(["claim", "kind", "ours (rehearsal)", "verdict"], body).rstrip() if body else "None.")
    return "\n".join(lines)


def update_page(page: Path, root: Path) -> list[str]:
    """Rewrite the results and budget blocks of one docs page; returns what was updated."""
    slug = page.stem
    text = page.read_text()
    replace_block(text, RESULTS_BEGIN, RESULTS_END, "", page)
    replace_block(text, BUDGET_BEGIN, BUDGET_END, "", page)
    done = []
    if SCALE_BEGIN in text:
        text = replace_block(text, SCALE_BEGIN, SCALE_END, paper_scale_block(slug, root), page)
        done.append("paper scale")
    claims_file = Path("results") / slug / "claims.json"
    if (root / claims_file).is_file():
        block = results_block(root / claims_file, claims_file.as_posix())
        text = replace_block(text, RESULTS_BEGIN, RESULTS_END, block, page)
        done.append("results")
    bench_dir = Path("results/benchmarks") / slug
    if list((root / bench_dir).glob("*.tsv")) or list((root / "logs" / slug).glob("*.log")):
        block = budget_block(root / bench_dir, bench_dir.as_posix(), root / "logs" / slug)
        text = replace_block(text, BUDGET_BEGIN, BUDGET_END, block, page)
        done.append("budget")
    page.write_text(text)
    return done


def update_readme(root: Path, papers_file: Path | None = None) -> None:
    """Rewrite the README's paper table from ``results/scoreboard.csv`` (all papers 'not run yet' without one)."""
    readme = root / "README.md"
    scoreboard = root / "results/scoreboard.csv"
    rows = read_rows(scoreboard) if scoreboard.is_file() else []
    papers = load_papers(papers_file or root / "resources/papers.yaml")
    text = readme.read_text()
    readme.write_text(replace_block(text, README_BEGIN, README_END, readme_table(rows, papers, root), readme))


def update_all(root: Path) -> dict[str, list[str]]:
    """README table and every paper page (``docs/papers/<slug>.md`` of a registry paper)."""
    update_readme(root)
    papers = load_papers(root / "resources/papers.yaml")
    pages = sorted(p for p in (root / "docs/papers").glob("*.md") if p.stem in papers)
    return {page.stem: update_page(page, root) for page in pages}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path("."), help="repository root (default: .)")
    args = parser.parse_args(argv)
    for slug, done in update_all(args.root).items():
        print(f"docs/papers/{slug}.md: {', '.join(done) if done else 'no results in this checkout, left as is'}")
    print("README.md: paper table rewritten")


if __name__ == "__main__":
    main()
