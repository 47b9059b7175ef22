"""Wall time of the BioDynaSpec embedded default end to end (fresh results, 2 cores).

Removes data/atlas and results/biodynaspec in the checkout, runs `snakemake --cores 2 biodynaspec`,
and prints the wall time and each rule's time from the logs.

Usage: python benchmarks/biodynaspec_end_to_end.py  (from the repository root)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path


def main() -> None:
    for path in ("data/atlas", "results/biodynaspec"):
        shutil.rmtree(path, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run(["snakemake", "--cores", "2", "biodynaspec"], check=True, capture_output=True)
    wall = time.perf_counter() - start
    print(f"snakemake --cores 2 biodynaspec: {wall:.1f} s wall")
    for log in sorted(Path("logs").glob("**/*.log")):
        if "biodynaspec" in str(log) or "atlas" in log.name:
            done = re.findall(r"done in ([\d.]+) s", log.read_text())
            if done:
                print(f"  {log}: {done[-1]} s")


if __name__ == "__main__":
    main()
