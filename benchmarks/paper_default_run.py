"""Wall and CPU time of one paper's embedded default, end to end, in a scratch working directory.

Usage: python benchmarks/paper_default_run.py --target talda [--cores 2]
Prints wall seconds, CPU seconds of all child processes, the load average before and after, and per-job times
from the logs. Runs `snakemake -s Snakefile -d <tmp>` so the checkout's results/ are untouched.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--target", required=True, help="a paper's target rule, e.g. talda or poisson_eat")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        load_before = os.getloadavg()[0]
        start = time.perf_counter()
        cmd = [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "-d",
            work,
            "--configfile",
            str(REPO / "config/config.yaml"),
            "--cores",
            str(args.cores),
            args.target,
            "--quiet",
        ]
        subprocess.run(cmd, check=True, cwd=REPO)
        wall = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(
            f"target {args.target}: wall {wall:.1f} s, CPU {usage.ru_utime + usage.ru_stime:.1f} s "
            f"on {args.cores} cores; load average before {load_before:.2f}, after {os.getloadavg()[0]:.2f}"
        )
        for log in sorted(Path(work, "logs").rglob("*.log")):
            found = re.findall(r"(\S+) done in ([\d.]+) s", log.read_text())
            for module, seconds in found:
                print(f"  {log.relative_to(Path(work, 'logs'))}: {module} {seconds} s")


if __name__ == "__main__":
    main()
