"""Per-paper cost of a workflow run, from what the workflow itself records.

Every rule writes a ``benchmark:`` file (``results/benchmarks/<slug>/<stage>.tsv`` for declared papers,
``results/benchmarks/data/<rule>.tsv`` for the data sources); every stage's log ends with
``<entry> done in X s``, the time spent in its ``main``. This script turns them into one row per paper:

- wall: the sum of its jobs' wall seconds (what it costs alone on one core; run in parallel it takes less);
- CPU: the sum of the jobs' CPU seconds (user + system, children included), as each stage process reports
  it in its log (``process: X CPU-s``, from getrusage). Snakemake's benchmark samples CPU time every 0.5 s
  for 15 s, then every 30 s, keeping the last sample, so it undercounts jobs of 20 to 45 s; its figure is
  used only for a job whose log has none;
- peak: the largest resident memory of any of its jobs (the larger of the log's and the benchmark's);
- jobs: jobs the snakemake log shows for the paper's rules (the benchmark files where no log is found);
- start-up: per job, wall minus the time inside ``main``: interpreter start, snakemake's script
  preamble, imports (torch alone is about 1.8 s here), and writing the benchmark file.

- alone (with ``--alone``): seconds of ``snakemake --cores N <paper>`` with the shared data already made,
  each paper run by itself in turn: the budget's "alone on 2 cores"; net: alone minus the seconds of a
  ``snakemake`` run that has nothing to do (its own start: parsing the 35-paper workflow, building the DAG,
  checking files), measured in the same run. The budget's wall is judged on net.

- engine (with ``--run``): CPU seconds of the Snakemake process itself (its scheduler, file checks, job
  bookkeeping and benchmark sampling threads; from its own getrusage at exit) against the CPU of the whole run
  (every process the run started, from this script's getrusage of its waited-for children): the engine's
  share of the run's CPU. "other" is what is neither the engine nor a stage's logged process (the jobs' script
  wrappers, a job whose log has no usage line; with Snakemake's ILP scheduler, also its CBC solver). Stored in ``.snakemake/engine_usage.json`` of the run's
  folder, so tabulating that folder later prints it again. ``--profile-engine FILE`` also samples the engine
  with py-spy (``pip install py-spy``) into FILE (collapsed stacks; ``--top`` lists the heaviest frames).

Where Slurm's client is installed but no controller answers, every ``snakemake`` start waits about 9 s in
the Slurm executor plugin's import (it runs ``scontrol show config``); the script says so. Bring the test
cluster up first (``cluster/up``), as CI does, to measure without that wait.

Usage:
    python benchmarks/default_run.py                      # tabulate the checkout's last run
    python benchmarks/default_run.py --workdir DIR        # ... of a run in DIR
    python benchmarks/default_run.py --run talda era5_data  # run these targets in a scratch copy, then tabulate
    python benchmarks/default_run.py --alone              # the data, then every paper alone, in a scratch copy
    python benchmarks/default_run.py --run --profile-engine /tmp/engine.txt   # the default, engine sampled

Budget per paper on the embedded default (issue 20): about 25 s wall, 40 CPU seconds, 2 GB; rows over it say so.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from repro.workflow.entry import USAGE_LINE, logged_usage  # noqa: E402

BUDGET = {"wall": 25.0, "cpu": 40.0, "peak_mb": 2000.0}
# Benchmark folders of the data sources, made once for every paper that reads them: no budget of their own.
SHARED_GROUPS = ("data", "package_data")
DONE = re.compile(r"(\S+) done in ([\d.]+) s")
ENGINE_USAGE = Path(".snakemake") / "engine_usage.json"
# `python -c ENGINE_WRAPPER USAGE_FILE ARGS...` is `snakemake ARGS...` that writes its own process's CPU seconds
# (all its threads; not its children) to USAGE_FILE when it exits.
ENGINE_WRAPPER = """
import atexit, json, resource, sys
usage_file = sys.argv.pop(1)
def _write_usage():
    u = resource.getrusage(resource.RUSAGE_SELF)
    with open(usage_file, "w") as fh:
        json.dump({"engine_cpu_s": u.ru_utime + u.ru_stime, "engine_peak_mb": u.ru_maxrss / 1024}, fh)
atexit.register(_write_usage)
sys.argv[0] = "snakemake"
from snakemake.cli import main
main()
"""


@dataclass
class Cost:
    """Summed cost of one paper's (or data source's) jobs."""

    wall: float = 0.0
    cpu: float = 0.0
    peak_mb: float = 0.0
    benchmarked: int = 0
    startup: list[float] = field(default_factory=list)
    jobs: int = 0

    def over_budget(self, alone: float | None = None) -> list[str]:
        """Budget items exceeded; the wall item is the alone time where measured, else the summed job wall."""
        values = {"wall": self.wall if alone is None else alone, "cpu": self.cpu, "peak_mb": self.peak_mb}
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
        log = log_for(workdir, group, tsv)
        cpu, peak = logged_usage(log) or (bench.get("cpu_time", 0.0), 0.0)
        cost = costs[group]
        cost.wall += bench.get("s", 0.0)
        cost.cpu += cpu
        cost.peak_mb = max(cost.peak_mb, peak, bench.get("max_rss", 0.0))
        cost.benchmarked += 1
        inside = main_seconds(log)
        if inside is not None:
            cost.startup.append(bench.get("s", 0.0) - inside)
    # Stages eligible for the between-workflow cache have no benchmark file (Snakemake refuses both on one
    # rule): their logs' last "done in" line gives wall (inside the stage), CPU and peak.
    timed = {
        (t.relative_to(workdir / "results" / "benchmarks").parts[0], t.stem)
        for t in (workdir / "results" / "benchmarks").rglob("*.tsv")
    }
    for log in sorted((workdir / "logs").glob("*/*.log")):
        group = log.parent.name
        found = USAGE_LINE.findall(log.read_text(errors="replace"))
        if group in ("data", "fixtures") or (group, log.stem) in timed or not found:
            continue
        wall, cpu, peak = (float(v) for v in found[-1])
        cost = costs[group]
        cost.wall += wall
        cost.cpu += cpu
        cost.peak_mb = max(cost.peak_mb, peak)
        cost.benchmarked += 1
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


def print_table(costs: dict[str, Cost], alone: dict[str, float] | None = None) -> None:
    """One row per paper; with ``alone`` (seconds of each paper run by itself) the budget's wall is that."""
    alone = dict(alone or {})
    start = alone.pop("(start)", 0.0)
    net = {slug: seconds - start for slug, seconds in alone.items()}
    header = (
        f"{'paper':<24}{'jobs':>5}{'wall s':>9}{'alone s':>9}{'net s':>7}{'CPU s':>9}{'peak MB':>9}"
        f"{'start-up s/job':>16}  budget"
    )
    print(header)
    print("-" * len(header))
    total = Cost()
    for group in sorted(costs):
        cost = costs[group]
        startup = sum(cost.startup) / len(cost.startup) if cost.startup else float("nan")
        shared = group in SHARED_GROUPS
        over = [] if shared else cost.over_budget(net.get(group))
        verdict = "over: " + ", ".join(over) if over else ("shared" if shared else "within")
        nan = float("nan")
        print(
            f"{group:<24}{cost.jobs:>5}{cost.wall:>9.1f}{alone.get(group, nan):>9.1f}{net.get(group, nan):>7.1f}"
            f"{cost.cpu:>9.1f}{cost.peak_mb:>9.0f}{startup:>16.2f}  {verdict}"
        )
        total.jobs += cost.jobs
        total.wall += cost.wall
        total.cpu += cost.cpu
        total.peak_mb = max(total.peak_mb, cost.peak_mb)
        total.startup += cost.startup
    startup = sum(total.startup) / len(total.startup) if total.startup else float("nan")
    print("-" * len(header))
    print(
        f"{'total':<24}{total.jobs:>5}{total.wall:>9.1f}{sum(alone.values()) or float('nan'):>9.1f}"
        f"{sum(net.values()) or float('nan'):>7.1f}{total.cpu:>9.1f}{total.peak_mb:>9.0f}{startup:>16.2f}"
    )
    if start:
        within = [slug for slug, cost in costs.items() if slug in net and not cost.over_budget(net[slug])]
        print(f"snakemake's own start (nothing to do): {start:.1f} s; within every budget item: {len(within)} papers")
    if total.startup:
        print(
            f"start-up overhead: {sum(total.startup):.1f} s of {total.wall:.1f} s job wall "
            f"({100 * sum(total.startup) / max(total.wall, 1e-9):.0f} %), {len(total.startup)} jobs with a main() time"
        )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured_snakemake(
    work: Path, args: list[str], profile: Path | None = None, timeout: int = 7200, check: bool = True
) -> dict:
    """Run ``snakemake ARGS`` in ``work``; return its wall seconds, the engine's own CPU seconds and the CPU of
    the whole run (the engine and everything it started), and store them in ``work/.snakemake/engine_usage.json``.

    With ``profile``, py-spy samples the engine process (not its jobs) at 20 Hz into that file. With ``check``,
    a failed run stops this script; without, the record carries its return code and the tail of its stderr.
    """
    usage_file = work / ENGINE_USAGE
    usage_file.parent.mkdir(parents=True, exist_ok=True)
    usage_file.unlink(missing_ok=True)
    load = os.getloadavg()[0]
    before = _children_cpu()
    start = time.perf_counter()
    cmd = [sys.executable, "-c", ENGINE_WRAPPER, str(usage_file), *args]
    proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    spy = None
    if profile is not None:
        if shutil.which("py-spy") is None:
            sys.exit("--profile-engine needs py-spy: pip install py-spy")
        spy_cmd = ["py-spy", "record", "--pid", str(proc.pid), "--rate", "20", "--format", "raw", "-o", str(profile)]
        spy = subprocess.Popen(spy_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    wall = time.perf_counter() - start
    run_cpu = _children_cpu() - before  # before py-spy is waited for: its own CPU is not the run's
    if spy is not None:
        spy.wait(timeout=120)
    if check and proc.returncode != 0:
        raise SystemExit(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{out[-3000:]}\n{err[-6000:]}")
    # a run that died before its exit handler left no usage file: its engine CPU is unknown, not zero
    engine = json.loads(usage_file.read_text()) if usage_file.is_file() else None
    record = {
        "args": args,
        "wall_s": round(wall, 1),
        "load_before": round(load, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "run_cpu_s": round(run_cpu, 2),
        "engine_cpu_s": round(engine["engine_cpu_s"], 2) if engine else None,
        "engine_peak_mb": round(engine["engine_peak_mb"], 1) if engine else None,
        "returncode": proc.returncode,
        "stderr_tail": err[-3000:] if proc.returncode else "",
    }
    usage_file.write_text(json.dumps(record, indent=1))
    return record


def engine_share(workdir: Path, costs: dict[str, Cost]) -> str | None:
    """The line saying what share of a run's CPU the Snakemake process itself used (None: not measured)."""
    path = workdir / ENGINE_USAGE
    if not path.is_file():
        return None
    rec = json.loads(path.read_text())
    run, engine = rec["run_cpu_s"], rec["engine_cpu_s"]
    if engine is None:
        return None
    stages = sum(cost.cpu for cost in costs.values())
    other = max(run - engine - stages, 0.0)
    return (
        f"engine (the snakemake process): {engine:.1f} CPU-s of {run:.1f} CPU-s for the whole run "
        f"({100 * engine / max(run, 1e-9):.1f} %); stages {stages:.1f} CPU-s, other {other:.1f} CPU-s "
        f"(job processes outside a stage's logged usage: script wrappers, jobs without a usage line); {rec['wall_s']:.0f} s wall, peak {rec['engine_peak_mb']:.0f} MB; "
        f"load {rec['load_before']:.1f} before, {rec['load_after']:.1f} after"
    )


def top_frames(profile: Path, n: int = 25) -> list[tuple[float, str]]:
    """The heaviest frames of a py-spy raw profile: (share of samples that include the frame, frame)."""
    total, inclusive = 0, defaultdict(int)
    for line in profile.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        total += int(count)
        for frame in set(stack.split(";")):
            inclusive[frame] += int(count)
    ranked = sorted(inclusive.items(), key=lambda kv: -kv[1])[:n]
    return [(count / max(total, 1), frame) for frame, count in ranked]


def run_targets(targets: list[str], cores: int, profile: Path | None = None) -> Path:
    """Run ``targets`` in a scratch copy of the workflow; return the copy (kept for inspection)."""
    sys.path.insert(0, str(REPO / "tests"))
    from workflow_tools import copy_workflow

    work = copy_workflow(Path(tempfile.mkdtemp(prefix="default_run_")) / "wf")
    rec = measured_snakemake(work, ["--cores", str(cores), *targets], profile)
    print(
        f"ran {' '.join(targets) or 'all'} in {work}: {rec['wall_s']:.1f} s wall on {cores} cores; "
        f"load before {rec['load_before']:.2f}, after {rec['load_after']:.2f}"
    )
    return work


def run_alone(cores: int) -> tuple[Path, dict[str, float]]:
    """Make the shared data, then run each enabled paper's target by itself; return the copy and its seconds."""
    import yaml

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    packages = yaml.safe_load((REPO / "resources" / "package_data.yaml").read_text())["packages"]
    data = [f"data/packages/{name}/manifest.json" for name in packages]
    data += [f"{source}_data" for source in config["data"] if source != "package_data"]
    papers = [slug for slug, section in config["papers"].items() if section.get("enabled")]
    work = run_targets(data, cores)
    sys.path.insert(0, str(REPO / "tests"))
    from workflow_tools import snakemake

    warn_if_slurm_hangs()
    alone = {}
    for slug in papers:
        start = time.perf_counter()
        snakemake(work, "--cores", str(cores), slug.replace("-", "_"), timeout=3600)
        alone[slug] = time.perf_counter() - start
        print(f"{slug}: {alone[slug]:.1f} s alone on {cores} cores", flush=True)
    snakemake(work, "--cores", str(cores), timeout=3600)
    start = time.perf_counter()
    snakemake(work, "--cores", str(cores), timeout=3600)
    alone["(start)"] = time.perf_counter() - start
    print(f"snakemake with nothing to do: {alone['(start)']:.1f} s", flush=True)
    return work, alone


def warn_if_slurm_hangs() -> None:
    """Say when ``scontrol`` exists but takes seconds to answer (no controller): snakemake's start then pays it."""
    import shutil
    import subprocess

    if shutil.which("scontrol") is None:
        return
    start = time.perf_counter()
    subprocess.run(["scontrol", "show", "config"], capture_output=True, timeout=60, check=False)
    if time.perf_counter() - start > 2:
        print(
            f"warning: `scontrol show config` took {time.perf_counter() - start:.0f} s (no Slurm controller?): "
            "every snakemake start pays it in the Slurm plugin's import; run cluster/up first",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=REPO)
    parser.add_argument("--run", nargs="*", metavar="TARGET", help="run these targets (none: the default) first")
    parser.add_argument("--alone", action="store_true", help="run the data, then each paper by itself")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--profile-engine", type=Path, metavar="FILE", help="with --run: py-spy the engine into FILE")
    parser.add_argument("--top", type=Path, metavar="FILE", help="list the heaviest frames of a py-spy raw profile")
    args = parser.parse_args()
    if args.top:
        for share, frame in top_frames(args.top):
            print(f"{100 * share:5.1f} %  {frame}")
        return
    alone: dict[str, float] = {}
    if args.alone:
        workdir, alone = run_alone(args.cores)
    else:
        workdir = run_targets(args.run, args.cores, args.profile_engine) if args.run is not None else args.workdir
    costs = tabulate(workdir)
    if not costs:
        sys.exit(f"no benchmark files under {workdir / 'results' / 'benchmarks'}: run the workflow first")
    print_table(costs, alone)
    share = engine_share(workdir, costs)
    if share:
        print(share)
    if args.profile_engine:
        print(f"heaviest frames of the engine ({args.profile_engine}):")
        for share_, frame in top_frames(args.profile_engine, 15):
            print(f"{100 * share_:5.1f} %  {frame}")


if __name__ == "__main__":
    main()
