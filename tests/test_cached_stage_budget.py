"""A stage eligible for the between-workflow cache has no benchmark file (Snakemake refuses both on one rule):
the docs' budget block and benchmarks/default_run.py take its cost from its log's last "done in" line."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from repro.reporting.docs import budget_block

REPO = Path(__file__).resolve().parents[1]
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
LINE = "2026-12-01 22:47:29,308 repro.workflow.entry INFO repro.papers.x.train done in 42.0 s (process: 12.9 CPU-s, peak 395 MB)\n"


def layout(root: Path) -> None:
    (root / "results/benchmarks/toy").mkdir(parents=True)
    (root / "results/benchmarks/toy/evaluate.tsv").write_text(HEADER + "1.5\t0:00:01\t100\t0\t0\t0\t0\t0\t0\t1.0\n")
    (root / "logs/toy").mkdir(parents=True)
    (root / "logs/toy/train_0.log").write_text(LINE)


def test_the_budget_block_lists_a_cached_stage_from_its_log(tmp_path):
    layout(tmp_path)
    block = budget_block(tmp_path / "results/benchmarks/toy", "results/benchmarks/toy", tmp_path / "logs/toy")
    assert "| train\\_0 | 42 | 12.9 | 395 |" in block or "| train_0 | 42 | 12.9 | 395 |" in block, block


def test_default_run_counts_a_cached_stage_from_its_log(tmp_path):
    layout(tmp_path)
    spec = importlib.util.spec_from_file_location("default_run", REPO / "benchmarks" / "default_run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    cost = module.tabulate(tmp_path)["toy"]
    assert cost.cpu == 12.9 + 1.0 and cost.peak_mb == 395 and cost.benchmarked == 2
