"""Wall time of the Mosaic embedded default from scratch: data, three trainings, evaluation, figures.

Runs ``snakemake --cores N mosaic --forceall`` in the repository (it overwrites results/mosaic and
data/era5) and prints the wall time and each job's time from the logs.

    python benchmarks/mosaic_end_to_end.py --cores 2
"""

from __future__ import annotations

import argparse
import re
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    subprocess.run(["snakemake", "--cores", str(args.cores), "mosaic", "--forceall", "--quiet"], cwd=REPO, check=True)
    wall = time.perf_counter() - start
    print(f"mosaic end to end on {args.cores} cores: {wall:.1f} s")
    for log in sorted((REPO / "logs").rglob("*.log")):
        if "mosaic" in str(log) or "era5" in log.name:
            done = re.findall(r"(\S+) done in ([0-9.]+) s", log.read_text())
            if done:
                print(f"  {log.relative_to(REPO)}: {done[-1][1]} s")


if __name__ == "__main__":
    main()
