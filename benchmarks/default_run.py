"""Per-paper cost of a workflow run, from what the workflow itself records.

Every rule writes a ``benchmark:`` file (``results/benchmarks/<slug>/<stage>.tsv`` for declared papers,
``results/benchmarks/data/<rule>.tsv`` for the data sources); every stage's log ends with
``<entry> done in X s``, the time spent in its ``main``. This script turns them into one row per paper:

- wall: the sum of its jobs' wall seconds (what it costs alone on one core; run in parallel it takes less);
- CPU: the sum of the jobs' CPU seconds (user + system, children included, as snakemake's benchmark measures);
- peak: the largest resident memory of any of its jobs;
- jobs: jobs the snakemake log shows for the paper's rules (the benchmark files where no log is found);
- start-up: per job, wall minus the time inside ``main``: interpreter start, snakemake's script
  preamble, imports (torch alone is about 1.8 s here), and writing the benchmark file.

Usage:
    python benchmarks/default_run.py                      # tabulate the checkout's last run
    python benchmarks/default_run.py --workdir DIR        # ... of a run in DIR
    python benchmarks/default_run.py --run talda era5_data  # run these targets in a scratch copy, then tabulate

Budget per paper on the embedded default (issue 20): about 25 s wall, 40 CPU seconds, 2 GB; rows over it say so.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGET = {"wall": 25.0, "cpu": 40.0, "peak_mb": 2000.0}
DONE = re.compile(r"(\S+) done in ([\d.]+) s")


@dataclass
class Cost:
    """Summed cost of one paper's (or data source's) jobs."""

    wall: float = 0.0
    cpu: float = 0.0
    peak_mb: float = 0.0
    benchmarked: int = 0
    startup: list[float] = field(default_factory=list)
    jobs: int = 0

    def over_budget(self) -> list[str]:
        values = {"wall": self.wall, "cpu": self.cpu, "peak_mb": self.peak_mb}
        return [k for k, limit in BUDGET.items() if values[k] > limit]


def read_benchmark(path: Path) -> dict[str, float]:
    """The last row of a snakemake benchmark TSV as floats (``s``, ``max_rss`` in MB, ``cpu_time``, ...)."""
    with open(path) as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    out = {}
    for key, value in rows[-1].items():
        try:
            out[key] = float(value)
        except (TypeError, ValueError):
            continue
    return out


def main_seconds(log: Path) -> float | None:
    """Seconds spent in the stage's ``main`` (the entry's last ``done in`` line), None if the log has none."""
    if not log.exists():
        return None
    found = DONE.findall(log.read_text(errors="replace"))
    return float(found[-1][1]) if found else None


def log_for(workdir: Path, group: str, tsv: Path) -> Path:
    """The stage log matching a benchmark file: logs/<slug>/<stage>.log; a data rule's is logs/data/<rule>.log
    or, for ``<source>_data``, logs/data/<source>.log."""
    candidates = [workdir / "logs" / group / f"{tsv.stem}.log"]
    if group == "data" and tsv.stem.endswith("_data"):
        candidates.append(workdir / "logs" / "data" / f"{tsv.stem.removesuffix('_data')}.log")
    return next((c for c in candidates if c.exists()), candidates[0])


def job_counts(workdir: Path) -> dict[str, int]:
    """Jobs per rule in the newest snakemake log of ``workdir`` (rules it ran, not those it found done)."""
    logs = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.stat().st_mtime)
    counts: dict[str, int] = defaultdict(int)
    if logs:
        for match in re.finditer(r"^(?:local)?rule (\w+):$", logs[-1].read_text(errors="replace"), re.MULTILINE):
            counts[match.group(1)] += 1
    return counts


def tabulate(workdir: Path) -> dict[str, Cost]:
    """One :class:`Cost` per folder of ``results/benchmarks`` (a paper slug, or ``data``)."""
    costs: dict[str, Cost] = defaultdict(Cost)
    for tsv in sorted((workdir / "results" / "benchmarks").rglob("*.tsv")):
        group = tsv.relative_to(workdir / "results" / "benchmarks").parts[0]
        bench = read_benchmark(tsv)
        cost = costs[group]
        cost.wall += bench.get("s", 0.0)
        cost.cpu += bench.get("cpu_time", 0.0)
        cost.peak_mb = max(cost.peak_mb, bench.get("max_rss", 0.0))
        cost.benchmarked += 1
        inside = main_seconds(log_for(workdir, group, tsv))
        if inside is not None:
            cost.startup.append(bench.get("s", 0.0) - inside)
    counts = job_counts(workdir)
    data_prefixes = tuple(data_rule_prefixes(workdir))
    for group, cost in costs.items():
        prefix = group.replace("-", "_") + "_"
        ran = sum(n for rule, n in counts.items() if rule.startswith(prefix) or rule == prefix[:-1])
        if group == "data":
            ran = sum(n for rule, n in counts.items() if rule.startswith(data_prefixes))
        cost.jobs = ran or cost.benchmarked
    return dict(costs)


def data_rule_prefixes(workdir: Path) -> list[str]:
    """Rule-name prefixes of the data sources (``era5_``, ``atlas_``...): the data rule files' names."""
    return [p.stem + "_" for p in (workdir / "workflow" / "rules").glob("*.smk") if p.stem in _data_sources(workdir)]


def _data_sources(workdir: Path) -> set[str]:
    import yaml

    config = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
    return set(config.get("data", {}))


def print_table(costs: dict[str, Cost]) -> None:
    header = f"{'paper':<16}{'jobs':>5}{'wall s':>9}{'CPU s':>9}{'peak MB':>9}{'start-up s/job':>16}  budget"
    print(header)
    print("-" * len(header))
    total = Cost()
    for group in sorted(costs):
        cost = costs[group]
        startup = sum(cost.startup) / len(cost.startup) if cost.startup else float("nan")
        over = cost.over_budget() if group != "data" else []
        verdict = "over: " + ", ".join(over) if over else ("shared" if group == "data" else "within")
        print(
            f"{group:<16}{cost.jobs:>5}{cost.wall:>9.1f}{cost.cpu:>9.1f}{cost.peak_mb:>9.0f}{startup:>16.2f}  {verdict}"
        )
        total.jobs += cost.jobs
        total.wall += cost.wall
        total.cpu += cost.cpu
        total.peak_mb = max(total.peak_mb, cost.peak_mb)
        total.startup += cost.startup
    startup = sum(total.startup) / len(total.startup) if total.startup else float("nan")
    print("-" * len(header))
    print(f"{'total':<16}{total.jobs:>5}{total.wall:>9.1f}{total.cpu:>9.1f}{total.peak_mb:>9.0f}{startup:>16.2f}")
    if total.startup:
        print(
            f"start-up overhead: {sum(total.startup):.1f} s of {total.wall:.1f} s job wall "
            f"({100 * sum(total.startup) / max(total.wall, 1e-9):.0f} %), {len(total.startup)} jobs with a main() time"
        )


def run_targets(targets: list[str], cores: int) -> Path:
    """Run ``targets`` in a scratch copy of the workflow; return the copy (kept for inspection)."""
    sys.path.insert(0, str(REPO / "tests"))
    from workflow_tools import copy_workflow, snakemake

    work = copy_workflow(Path(tempfile.mkdtemp(prefix="default_run_")) / "wf")
    load = os.getloadavg()
    start = time.perf_counter()
    snakemake(work, "--cores", str(cores), *targets, timeout=7200)
    print(
        f"ran {' '.join(targets) or 'all'} in {work}: {time.perf_counter() - start:.1f} s wall on {cores} cores; "
        f"load before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}"
    )
    return work


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=REPO)
    parser.add_argument("--run", nargs="*", metavar="TARGET", help="run these targets (none: the default) first")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    workdir = run_targets(args.run, args.cores) if args.run is not None else args.workdir
    costs = tabulate(workdir)
    if not costs:
        sys.exit(f"no benchmark files under {workdir / 'results' / 'benchmarks'}: run the workflow first")
    print_table(costs)


if __name__ == "__main__":
    main()
