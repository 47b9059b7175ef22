"""The Mosaic target's DAG at both scales (dry runs; nothing is executed)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def dry_run(*extra: str) -> str:
    result = subprocess.run(["snakemake", "-n", "-F", "mosaic", *extra], cwd=REPO, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(result.stdout[-2000:] + result.stderr[-2000:])
    return result.stdout


def job_counts(text: str) -> dict[str, int]:
    table = text[text.index("Job stats:") :]
    return {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)$", table, flags=re.M)}


def test_embedded_dag_has_every_stage_without_gpus():
    out = dry_run()
    counts = job_counts(out)
    variants = yaml.safe_load((REPO / "config/config.yaml").read_text())["papers"]["mosaic"]["variants"]
    assert counts["mosaic_train"] == len(variants) and counts["era5_data"] == 1 and counts["era5_sample"] == 1
    assert counts["mosaic_evaluate"] == 1 and counts["mosaic_figures"] == 1 and counts["mosaic_attention_cost"] == 1
    assert "gpu=1" not in out


def test_full_scale_asks_for_gpus_on_training_and_evaluation():
    out = dry_run("--configfile", "config/full.yaml")
    assert job_counts(out)["mosaic_train"] == 4  # the dense twin and Mosaic-C train at full scale
    blocks = out.split("\nrule ") + out.split("\nlocalrule ")
    gpu_rules = {b.split(":")[0].strip() for b in blocks if "gpu=1" in b}
    assert {"mosaic_train", "mosaic_evaluate", "mosaic_attention_cost"} <= gpu_rules
    assert not {"era5_data", "era5_sample", "mosaic_figures"} & gpu_rules
