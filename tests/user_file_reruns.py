"""Reruns after a user replaces one of their data files (issue 28): on a copy of the workflow, run the stages
that read the file for real (or mark them finished, :func:`finished`, where a real run is too slow), replace the
file with a new version, and list what a dry run schedules.

Used by the readers' tests (one per source and per paper-level reader): the scheduled jobs must be exactly
the reader and the stages downstream of it that were run, nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import yaml
from test_slurm_harness import parse_dry_run
from workflow_tools import copy_workflow, snakemake


def user_file_rerun(
    tmp_path: Path,
    overlay: dict,
    place: Callable[[Path], None],
    targets: list[str],
    change: Callable[[Path], None],
) -> tuple[list[str], list[str]]:
    """(rules a dry run schedules after ``change``, rules of the first real run).

    ``overlay`` is a config overlay (after config/full.yaml) pointing the user-path key into the copy;
    ``place(root)`` writes the user's files there; ``targets`` are the outputs to build; ``change(root)``
    replaces one user file with a new version (new content, as a user copying in corrected data would).
    """
    root = copy_workflow(tmp_path / "repo")
    (root / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    place(root)
    args = ["--cores", "1", "--configfile", "config/full.yaml", "overlay.yaml", "--", *targets]
    first = snakemake(root, *args, timeout=900)
    ran = sorted({j.rule for j in parse_dry_run(first.stdout + first.stderr)})
    idle = snakemake(root, "-n", *args, timeout=300)
    assert not parse_dry_run(idle.stdout + idle.stderr), "a finished run must leave nothing to do"
    change(root)
    again = snakemake(root, "-n", *args, timeout=300)
    return sorted(j.rule for j in parse_dry_run(again.stdout + again.stderr)), ran


def finished(work: Path, *args: str) -> None:
    """Mark every job of ``args`` done without running it: create its outputs, then let Snakemake touch them
    and record its metadata (the state of a finished run, without its cost)."""
    plan = snakemake(work, "-n", *args).stdout
    for line in plan.splitlines():
        match = re.match(r"^\s+output: (.*)$", line)
        for path in match.group(1).split(", ") if match else []:
            target = work / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.write_text("placeholder")
    snakemake(work, "--touch", "--cores", "1", *args)
