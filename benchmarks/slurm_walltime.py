"""Wall time of the embedded default locally and through the Slurm test cluster (scheduling overhead).

Usage (cluster up: cluster/install && cluster/up):
    python benchmarks/slurm_walltime.py [TARGET ...] [--cores 2] [--init-seconds 5 40]
    python benchmarks/slurm_walltime.py --parse 3      # only the parse each cluster job repeats, 3 times
    python benchmarks/slurm_walltime.py --local-seconds 1010   # reuse a quiet local run's wall time

Each cluster job starts Snakemake twice (--mode remote: the batch step and its srun step), and each parses the
workflow (the rule files of the job's paper and the shared ones) before its work: ``--parse N`` times that parse
N times (after one that records what later parses reuse) and prints wall and CPU seconds.

Each run happens in a fresh copy of the checkout under a temporary folder. Prints one line per run:
where it ran, the status-check setting, jobs, wall seconds, and the overhead against the local run.
Default targets: every enabled paper of the embedded default.
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_slurm_harness import cluster_problem, copy_tree, paper_rules, snakemake  # noqa: E402


def timed(root: Path, *args: str) -> tuple[float, str]:
    start = time.monotonic()
    proc = snakemake(root, *args, timeout=3600)
    return time.monotonic() - start, proc.stdout + proc.stderr


def parse_cost(root: Path, repeats: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of the parse a cluster job repeats: ``--mode remote --list-rules`` with the
    ``--allowed-rules`` Snakemake gives the job of one paper's stages (the first paper's rules)."""
    paper = paper_rules()[0]
    listed = snakemake(root, "--list-rules").stdout.split()  # also records what later parses reuse
    job = ["--allowed-rules", *[r for r in listed if r == paper or r.startswith(f"{paper}_")]]
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, _ = timed(root, "--mode", "remote", *job, "--list-rules")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        walls.append(wall)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", default=None)
    parser.add_argument("--cores", default="2")
    parser.add_argument(
        "--init-seconds",
        nargs="+",
        type=int,
        default=[5],
        help="values of --slurm-init-seconds-before-status-checks to compare",
    )
    parser.add_argument("--parse", type=int, metavar="N", help="only time the per-job parse, N times")
    parser.add_argument(
        "--local-seconds",
        type=float,
        metavar="S",
        help="wall seconds of a local run of the same targets and commit, measured before (for example by "
        "benchmarks/default_run.py --run on a quiet machine): the local run is not repeated",
    )
    args = parser.parse_args()
    if args.parse:
        with tempfile.TemporaryDirectory() as tmp:
            wall, cpu = parse_cost(copy_tree(Path(tmp) / "parse"), args.parse)
        print(
            f"per-job parse (snakemake --mode remote, one paper's job of {len(paper_rules())} papers): "
            f"{wall:.1f} s wall, {cpu:.1f} CPU-s"
        )
        if cluster_problem():
            print("  (no Slurm controller answers: the wall includes the Slurm plugin's wait in scontrol)")
        return
    targets = args.targets or paper_rules()
    problem = cluster_problem()
    with tempfile.TemporaryDirectory() as tmp:
        if args.local_seconds is None:
            local_s, log = timed(copy_tree(Path(tmp) / "local"), "--cores", args.cores, *targets)
            jobs = len(re.findall(r"^\[.*\]\n(?:local)?rule ", log, flags=re.M)) or "?"
            origin = "measured now"
        else:
            local_s, jobs, origin = args.local_seconds, "?", "given with --local-seconds"
        print(f"targets: {' '.join(targets)}")
        print(f"local --cores {args.cores}: {local_s:.1f} s ({origin})")
        if problem:
            print(f"slurm: skipped ({problem})")
            return
        for init in args.init_seconds:
            root = copy_tree(Path(tmp) / f"slurm{init}")
            slurm_s, log = timed(
                root, "--profile", "slurm", "--slurm-init-seconds-before-status-checks", str(init), *targets
            )
            submitted = len(re.findall(r"has been submitted with SLURM jobid", log))
            print(
                f"slurm, first status check after {init} s: {slurm_s:.1f} s for {submitted} submitted jobs "
                f"(overhead {slurm_s - local_s:+.1f} s, {(slurm_s - local_s) / max(submitted, 1):+.1f} s per job); "
                f"local jobs counted: {jobs}; slurm/local {slurm_s / local_s:.2f} (goal at most 1.3)"
            )


if __name__ == "__main__":
    main()
