"""Reruns after a data update: replacing one canonical input of a data source schedules exactly the
jobs downstream of it, and nothing else (not the producer, not other sources' or papers' jobs).

One test per data source in the embedded config (sources added later are picked up); on the session's
one run of the embedded default (``default_run``), each replaces each canonical entry under data/<source>/ in
turn (a file, or a zarr directory), compares the dry run with the jobs downstream of that entry in
the file graph of the forced plan, and restores the original.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_slurm_harness import PlannedJob, embedded_config, parse_dry_run, planned_jobs, snakemake

pytestmark = pytest.mark.e2e
CONFIG = embedded_config()
SOURCES = sorted(CONFIG.get("data", {}))


def readers(source: str) -> list[str]:
    """Target rules of the enabled papers that read ``source`` (the first one keeps the test small)."""
    papers = [s for s, sec in CONFIG["papers"].items() if sec.get("enabled", True) and source in sec.get("data", [])]
    return [p.replace("-", "_") for p in papers[:1]]


def consumes(job: PlannedJob, path: str) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") or f.startswith(path + "/") for f in job.input)


def downstream(plan: list[PlannedJob], path: str) -> set[tuple]:
    """Jobs that read ``path`` directly or through any output derived from it.

    A target rule without outputs (``snakemake <paper>``) is scheduled when another scheduled job
    updates one of its inputs, not when ``path`` itself is its input (snakemake has nothing to compare).
    """
    hit: set[tuple] = set()
    frontier = [path]
    while frontier:
        current = frontier.pop()
        for job in plan:
            if not job.output and current == path:
                continue
            if job.key() not in hit and consumes(job, current):
                hit.add(job.key())
                frontier += job.output
    return hit


def replace(path: Path) -> Path:
    """Put a new version of ``path`` in place, as a user copying in new data would; return a backup.

    A directory (zarr store) arrives as a new folder: fresh mtime and no ``.snakemake_timestamp``
    (snakemake dates a directory output by that file, so editing chunks in place goes unnoticed).
    """
    backup = path.with_name(path.name + ".orig")
    os.replace(path, backup)
    if backup.is_dir():
        shutil.copytree(backup, path, copy_function=shutil.copy, ignore=shutil.ignore_patterns(".snakemake_timestamp"))
        victim = max((p for p in path.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    else:
        shutil.copy(backup, path)
        victim = path
    with open(victim, "ab") as fh:
        fh.write(b"\0 new version")
    os.utime(path)
    return backup


def restore(path: Path, backup: Path) -> None:
    shutil.rmtree(path) if path.is_dir() else path.unlink()
    os.replace(backup, path)


@pytest.fixture(scope="module")
def built(default_run):
    """The session's one run of the embedded default, where every paper reading a source has completed.

    Each test replaces entries under data/<source>/ and restores them (same bytes, same mtime), so the run
    is left as it was for the tests after these.
    """
    if not sorted({t for s in SOURCES for t in readers(s)}):
        pytest.skip("no enabled paper reads a data source")
    return default_run


@pytest.mark.parametrize("source", SOURCES)
def test_replacing_one_input_reruns_exactly_its_downstream_jobs(built, source):
    targets = readers(source)
    if not targets:
        pytest.skip(f"no enabled paper reads data source {source}")
    assert planned_jobs(built, "--cores", "1", *targets) == [], "a completed run should leave nothing to do"
    plan = planned_jobs(built, "--cores", "1", "--forceall", *targets)
    entries = sorted(p for p in (built / "data" / source).iterdir() if p.name != "manifest.json")
    assert entries, f"data/{source}/ holds no canonical files"
    checked = 0
    for entry in entries:
        rel = str(entry.relative_to(built))
        expected = downstream(plan, rel)
        if not expected:
            continue
        backup = replace(entry)
        try:
            proc = snakemake(built, "-n", "--cores", "1", *targets, timeout=300)
            scheduled = {j.key() for j in parse_dry_run(proc.stdout + proc.stderr)}
        finally:
            restore(entry, backup)
        assert scheduled == expected, (
            f"after replacing {rel}: unexpected {sorted(scheduled - expected)}; missing {sorted(expected - scheduled)}"
        )
        checked += 1
    assert checked, f"no job of {targets} reads any file of data/{source}/"
    assert planned_jobs(built, "--cores", "1", *targets) == [], "restoring the original must leave nothing to do"


def test_results_record_their_provenance(built):
    """Each results folder names its config section, data manifests, package versions and commit."""
    commit = subprocess.run(
        ["git", "-C", str(built), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    papers = sorted({t for s in SOURCES for t in readers(s)})
    for rule in papers:
        slug = next(s for s in CONFIG["papers"] if s.replace("-", "_") == rule)
        doc = json.loads((built / "results" / slug / "provenance.json").read_text())
        section = CONFIG["papers"][slug]
        science = {k: v for k, v in section.items() if k != "resources"}  # cluster resources are not provenance
        # the run's seed is recorded where one of the paper's stages takes it (seed=True), else None
        uses_seed = "seed=True" in (built / "workflow" / "rules" / f"{slug}.smk").read_text()
        assert doc["config"]["paper"] == science and doc["config"]["seed"] == (CONFIG["seed"] if uses_seed else None)
        manifests = {f"data/{s}/manifest.json" for s in section.get("data", [])}
        # data sources' manifests under data/; a paper's own generated data has its manifest under results/<slug>/
        assert {p for p in doc["data_manifests"] if p.startswith("data/")} == manifests
        assert all(p.startswith(f"results/{slug}/") for p in doc["data_manifests"] if not p.startswith("data/"))
        for path in manifests:
            assert doc["data_manifests"][path] == json.loads((built / path).read_text())
        assert doc["code"]["commit"] == commit
        assert doc["packages"]["snakemake"], "package versions missing"
