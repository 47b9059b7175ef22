"""Wall time of a paper's embedded default end to end, and of the paper-scale dry-run.

Usage: python benchmarks/workflow_timing.py [target ...]   (default target: hysomi)
Each target runs in a fresh copy of the workflow with `--cores 2`, so data generation is included.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from workflow_tools import copy_workflow, snakemake  # noqa: E402


def timed(work: Path, *args: str) -> float:
    start = time.perf_counter()
    snakemake(work, *args)
    return time.perf_counter() - start


def main(targets: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = copy_workflow(Path(tmp) / "wf")
        dry = min(timed(work, "-n", "--configfile", "config/full.yaml", "-q") for _ in range(3))
        print(f"snakemake -n --configfile config/full.yaml: {dry:.2f} s (best of 3)")
        for target in targets:
            print(f"{target} end to end on the embedded default, 2 cores: {timed(work, '--cores', '2', target):.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:] or ["hysomi"])
