"""A killed run resumes where it stopped: kill the workflow (SIGKILL, as a node failure or a
`scancel` would) while a training job runs, rerun, and get the same result as an uninterrupted run.

Run on LWE, whose training job (rule `lwe_train`: one small network per grid point, a checkpoint every epoch)
is among the cheapest of the embedded default that use the shared loop's checkpoints (6 CPU-s; the first
enabled paper's, hysomi's, took 78 and made this module the slowest of the suite after the shared runs); its
checkpoint lives under results/lwe/checkpoints/ (the repro.learning.training convention), and
repro.learning.training logs "resumed from" when it continues from a checkpoint.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from test_slurm_harness import TIMING, copy_tree, paper_rules, planned_jobs, snakemake

pytestmark = pytest.mark.e2e
TRAINING = re.compile(r"_train(_|$)")
KILL_WITHIN_S = 900
PAPER = "lwe"


def same_output(a: Path, b: Path) -> None:
    """Equal training results: arrays of .npz compared exactly (timings such as ``train_seconds`` are
    measurements of the run, not results, and are left out), other files byte for byte."""
    if a.suffix == ".npz":
        with np.load(a) as x, np.load(b) as y:
            assert sorted(x.files) == sorted(y.files)
            for key in (k for k in x.files if not TIMING.search(k)):
                np.testing.assert_array_equal(x[key], y[key], err_msg=f"{a.name}: array {key}")
    elif a.is_dir():
        for f in sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.name != ".snakemake_timestamp"):
            same_output(a / f, b / f)
    else:
        assert a.read_bytes() == b.read_bytes(), f"{a.name} differs"


def checkpoints(root: Path) -> list[Path]:
    """Checkpoints in place: a file being written lies in a hidden temporary folder (repro.workflow.io's
    atomic_path) until it is renamed, and does not count."""
    found = root.glob("results/*/checkpoints/**/*")
    return [p for p in found if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)]


def test_killed_training_resumes_from_its_checkpoint(tmp_path):
    if PAPER not in paper_rules():
        pytest.skip(f"{PAPER} is not enabled")
    killed, reference = copy_tree(tmp_path / "killed"), copy_tree(tmp_path / "reference")
    trainers = [j for j in planned_jobs(killed, "--cores", "1", PAPER) if TRAINING.search(j.rule)]
    assert trainers, f"{PAPER} has no training rule (<paper>_train)"
    job = trainers[0]
    output = job.output[0]

    # Build everything the training job needs, so that the kill hits the training itself.
    snakemake(killed, "--cores", "1", output, "--omit-from", job.rule, timeout=KILL_WITHIN_S)
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", output]
    proc = subprocess.Popen(
        cmd, cwd=killed, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + KILL_WITHIN_S
    try:
        while not checkpoints(killed):
            assert proc.poll() is None, f"snakemake ended (rc {proc.returncode}) before writing a checkpoint"
            assert time.monotonic() < deadline, "no checkpoint appeared"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not (killed / output).exists(), "training finished before it could be killed"

    # What a user does after a crash: release the stale lock, rerun (incomplete outputs are redone).
    snakemake(killed, "--unlock", "--cores", "1", output, timeout=120)
    snakemake(killed, "--cores", "1", "--rerun-incomplete", output, timeout=KILL_WITHIN_S)
    log = "\n".join((killed / f).read_text() for f in job.log if (killed / f).exists())
    assert "resumed from" in log, f"the rerun of {job.rule} did not resume from its checkpoint"

    snakemake(reference, "--cores", "1", output, timeout=KILL_WITHIN_S)
    same_output(killed / output, reference / output)


def test_a_failed_job_leaves_no_partial_output(tmp_path):
    """A training job whose data input (an upstream stage's output) is corrupt fails and leaves neither its
    output nor a temporary."""
    if PAPER not in paper_rules():
        pytest.skip(f"{PAPER} is not enabled")
    root = copy_tree(tmp_path / "repo")
    job = next(j for j in planned_jobs(root, "--cores", "1", PAPER) if TRAINING.search(j.rule))
    output = root / job.output[0]
    snakemake(root, "--cores", "1", job.output[0], "--omit-from", job.rule, timeout=KILL_WITHIN_S)
    data_file = next(root / f for f in job.input if f.startswith(("data/", "results/")) and (root / f).is_file())
    data_file.write_bytes(b"not the data this file should hold")
    proc = snakemake(root, "--cores", "1", job.output[0], timeout=KILL_WITHIN_S, check=False)
    assert proc.returncode != 0, f"{job.rule} ran on a corrupt {data_file.name}"
    assert f"Error in rule {job.rule}" in proc.stdout + proc.stderr, "the job itself should have run and failed"
    assert not output.exists(), f"failed job left {output}"
    leftovers = (
        [p.name for p in output.parent.iterdir() if p.name.startswith(f".{output.name}")]
        if output.parent.exists()
        else []
    )
    assert not leftovers, f"failed job left temporaries {leftovers}"
