"""End to end on the local Slurm test cluster: `snakemake --profile slurm` on the embedded default.

Runs a small target set once locally and once through the cluster, each in its own copy of the
checkout, then checks with `sacct` where every job ran and that both runs produced the same results.
The set covers each kind of job once, not every paper (the local end-to-end run does that): TALDA
(a converted numpy paper with its own data stage), the smallest rule of a shared data source
(`metagenome_data`), and one GPU job: the GPU overlay (test_slurm_harness.GPU_OVERLAY) makes one
P-VAE training job of poisson-eat (a torch stage; only those may ask for a GPU) request a GPU, which must
land on the GPU partition (the test cluster's GPUs are fake; the stage runs on CPUs either way, so both
runs give the same numbers).
REPRO_SLURM_TARGETS overrides the targets. Skips when no cluster answers (CI brings one up with
cluster/up); every snakemake call is killed after a bounded time, so a hang fails the test.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from test_slurm_harness import (
    GPU_TARGET,
    cluster_problem,
    copy_tree,
    loaded_workflow,
    planned_jobs,
    result_differences,
    snakemake,
    write_gpu_overlay,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]
PROBLEM = cluster_problem()
TIMEOUT = int(os.environ.get("REPRO_SLURM_TIMEOUT", "1500"))
DEFAULT_TARGETS = ["talda", "metagenome_data", GPU_TARGET]


def targets() -> list[str]:
    chosen = os.environ.get("REPRO_SLURM_TARGETS")
    return chosen.split() if chosen else DEFAULT_TARGETS


def sacct_records(run_id: str, expected: int, wait_s: float = 60) -> list[dict[str, str]]:
    """Allocation records of the run's jobs (job name = run id), waiting for accounting to catch up."""
    fields = ["JobID", "Partition", "AllocTRES", "Comment", "State"]
    deadline = time.monotonic() + wait_s
    while True:
        out = subprocess.run(
            ["sacct", "-X", "-n", "-P", "--name", run_id, "-S", "now-6hours", "-o", ",".join(fields)],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        rows = [dict(zip(fields, line.split("|"))) for line in out.splitlines() if line.strip()]
        settled = len(rows) >= expected and all(r["State"] not in ("PENDING", "RUNNING") for r in rows)
        if settled or time.monotonic() > deadline:
            return rows
        time.sleep(2)


def gpus_allocated(tres: str) -> int:
    match = re.search(r"gres/gpu(?::[^=,]+)?=(\d+)", tres)
    return int(match.group(1)) if match else 0


def json_results(root: Path) -> dict[str, object]:
    """Every JSON result except provenance (it records times and hosts by design); timing keys are
    left out when compared (see result_differences)."""
    return {
        str(p.relative_to(root)): json.loads(p.read_text())
        for p in sorted((root / "results").rglob("*.json"))
        if p.name != "provenance.json"
    }


@pytest.mark.skipif(PROBLEM is not None, reason=f"no Slurm test cluster: {PROBLEM}")
def test_profile_runs_on_the_cluster_with_gpu_and_cpu_partitions(tmp_path):
    chosen = targets()
    local, cluster = copy_tree(tmp_path / "local"), copy_tree(tmp_path / "cluster")
    overlay = ["--configfile", str(write_gpu_overlay(cluster))]
    write_gpu_overlay(local)
    planned = planned_jobs(cluster, "--cores", "1", *chosen, *overlay)
    with loaded_workflow(cluster, ["--profile", "slurm", *overlay]) as (workflow, _):
        local_rules = {r.name for r in workflow.rules if r.norun or r.name in workflow._localrules}
    expected = Counter(j.rule for j in planned if j.rule not in local_rules)
    gpu_rules = {j.rule for j in planned if int(j.resources.get("gpu", 0)) > 0}
    assert expected, f"nothing to submit for {chosen}"
    assert gpu_rules, f"no job of {chosen} asks for a GPU with the overlay"

    start = time.monotonic()
    snakemake(local, "--cores", "2", *chosen, "--configfile", str(local / "gpu_overlay.yaml"), timeout=TIMEOUT)
    local_s = time.monotonic() - start
    start = time.monotonic()
    run = snakemake(
        cluster,
        "--profile",
        "slurm",
        "--slurm-jobname-prefix",
        f"reprotest{uuid.uuid4().hex[:8]}",
        *chosen,
        *overlay,
        timeout=TIMEOUT,
    )
    cluster_s = time.monotonic() - start
    print(f"targets {chosen}: local {local_s:.0f} s, slurm {cluster_s:.0f} s, {sum(expected.values())} jobs")

    run_id = re.search(r"SLURM run ID: (\S+)", run.stdout + run.stderr).group(1)
    records = sacct_records(run_id, sum(expected.values()))
    ran = Counter()
    for rec in records:
        name = re.match(r"rule_(\w+?)(?:_wildcards_|$)", rec["Comment"]).group(1)
        # A paper's small stages of one phase run as one group job, which sacct names by the group and its
        # rules ("<slug>_small0_<rule>_<rule>..."); every other job by its rule.
        rules = [name] if name in expected else [r for r in expected if f"_{r}_" in f"_{name}_"]
        assert rules, f"sacct job {rec['JobID']} ({name}) runs no rule the DAG submits"
        assert rec["State"] == "COMPLETED", f"{name} job {rec['JobID']}: {rec['State']}"
        gpus = gpus_allocated(rec["AllocTRES"])
        if gpu_rules & set(rules) or gpus:
            assert rec["Partition"] == "gpu" and gpus >= 1, f"{name}: partition {rec['Partition']}, {rec['AllocTRES']}"
        else:
            assert rec["Partition"] == "cpu", f"{name} ran in partition {rec['Partition']}"
        ran.update(rules)
    assert ran == expected, f"sacct saw {dict(ran)}, the DAG submits {dict(expected)}"
    assert gpu_rules & set(ran), f"no GPU job ({sorted(gpu_rules)}) ran on the cluster"

    differences = result_differences(json_results(cluster), json_results(local))
    assert not differences, "results of the Slurm run differ from the local run:\n" + "\n".join(differences[:20])

    def produced(root):
        return sorted(str(p.relative_to(root)) for p in (root / "results").rglob("*") if p.is_file())

    assert produced(cluster) == produced(local)
