"""Benchmark: pai-graphon embedded default end to end, and mask throughput per criterion and width.

Usage: python benchmarks/pai_graphon_default_run.py [--skip-workflow]
Prints the wall and CPU time of `snakemake --cores 2 pai_graphon --forceall` (run in the repository; it
rewrites results/pai-graphon/) and how long one mask set takes per criterion and width (1 torch thread).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

from cgmt_erm_default_run import workflow_time  # noqa: E402

from repro.papers.pai_graphon import criteria, model  # noqa: E402


def mask_throughput(widths=(256, 1024, 2048)) -> None:
    torch.set_num_threads(1)
    x = torch.randn(256, 64)
    y = (x[:, 0] * x[:, 1] + x[:, 2] - x[:, 3] > 0).long()
    for width in widths:
        weights = model.init_weights(64, width, 1, seed=0)
        cells = []
        for criterion in criteria.CRITERIA:
            start = time.perf_counter()
            criteria.prune(criterion, weights, x, y, 0.1, seed=0)
            cells.append(f"{criterion} {1000 * (time.perf_counter() - start):7.1f} ms")
        print(f"width {width:5d}: " + ", ".join(cells))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-workflow", action="store_true")
    args = parser.parse_args()
    mask_throughput()
    if not args.skip_workflow:
        workflow_time("pai_graphon")
