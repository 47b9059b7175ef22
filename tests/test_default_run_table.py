"""benchmarks/default_run.py: per-paper CPU from the stage processes' own figures, not Snakemake's samples.

Snakemake's ``benchmark:`` keeps the CPU time of its last sample (every 0.5 s for 15 s, then every 30 s),
so a 40 s job shows about 15 CPU-s there; each stage logs its process's getrusage at its end instead.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

from repro.workflow.entry import process_usage

REPO = Path(__file__).resolve().parents[1]
BENCH_HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def load_table_module():
    spec = importlib.util.spec_from_file_location("default_run", REPO / "benchmarks" / "default_run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_process_usage_counts_this_process_cpu():
    before, _ = process_usage()
    start = time.process_time()
    total = 0
    while time.process_time() - start < 0.3:
        total += sum(range(1000))
    after, peak = process_usage()
    assert after - before >= 0.29, (before, after)
    assert peak > 10, "peak resident memory of a Python process with numpy imported is tens of MB"


def test_table_takes_cpu_and_peak_from_the_stage_log(tmp_path):
    table = load_table_module()
    (tmp_path / "results" / "benchmarks" / "toy").mkdir(parents=True)
    (tmp_path / "logs" / "toy").mkdir(parents=True)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("data: {}\n")
    (tmp_path / "workflow" / "rules").mkdir(parents=True)
    for stage, logged in (("train", True), ("figures", False)):
        (tmp_path / "results" / "benchmarks" / "toy" / f"{stage}.tsv").write_text(
            BENCH_HEADER + "40.0\t0:00:40\t300\t0\t0\t0\t0\t0\t0\t15.0\n"
        )
        line = "repro.papers.toy.train done in 37.5 s"
        if logged:
            line += " (process: 39.2 CPU-s, peak 812 MB)"
        (tmp_path / "logs" / "toy" / f"{stage}.log").write_text(line + "\n")
    cost = table.tabulate(tmp_path)["toy"]
    assert cost.cpu == 39.2 + 15.0, "the logged CPU for train, the benchmark's for the stage without the line"
    assert cost.peak_mb == 812
    assert cost.wall == 80.0 and sorted(cost.startup) == [2.5, 2.5]
