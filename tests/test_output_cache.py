"""Expensive stages are computed once per cluster: Snakemake's between-workflow cache (``--cache`` with a
shared ``SNAKEMAKE_OUTPUT_CACHE``) lets a second clone reuse the first clone's outputs, keyed by inputs,
params and code, and nothing read back from a cache that other users write can run code.

LWE is the paper used: its data and training stages declare ``cache="omit-software"`` and its instances
are an ``.npz`` that the training stage reads with ``allow_pickle=False``.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from workflow_tools import copy_workflow, snakemake

pytestmark = pytest.mark.e2e
PAPER, TARGET = "lwe", "lwe"
CACHED = ("lwe_data", "lwe_train")


def run(work: Path, cache: Path, check: bool = True):
    env_before = os.environ.get("SNAKEMAKE_OUTPUT_CACHE")
    os.environ["SNAKEMAKE_OUTPUT_CACHE"] = str(cache)
    try:
        return snakemake(work, "--cores", "2", TARGET, "--cache", timeout=1800, check=check)
    finally:
        if env_before is None:
            os.environ.pop("SNAKEMAKE_OUTPUT_CACHE")
        else:
            os.environ["SNAKEMAKE_OUTPUT_CACHE"] = env_before


def claims(work: Path) -> dict:
    doc = json.loads((work / "results" / PAPER / "claims.json").read_text())
    return {c["id"]: (c["ours"], c["verdict"]) for c in doc["claims"] if not c.get("timing")}


class Planted:
    """Unpickling this writes a marker file: what a malicious cache entry would do."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (Path.write_text, (Path(self.marker), "the cached file ran code"))


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> tuple[Path, Path]:
    """One clone that filled the cache: (cache folder, the clone)."""
    root = tmp_path_factory.mktemp("cache")
    cache = root / "cache"
    cache.mkdir()
    first = copy_workflow(root / "first")
    run(first, cache)
    return cache, first


def test_a_second_clone_trains_nothing_and_gets_the_same_claims(shared, tmp_path):
    cache, first = shared
    assert any(cache.iterdir()), "the first clone stored nothing in the cache"
    second = copy_workflow(tmp_path / "second")
    proc = run(second, cache)
    for rule in CACHED:
        stage = rule.split("_", 1)[1]
        log = second / "logs" / PAPER / f"{stage}.log"
        assert not log.exists() or "running repro.papers" not in log.read_text(), f"{rule} ran again: {log}"
    assert "from cache" in proc.stdout + proc.stderr  # Snakemake: "Symlinking output file ... from cache."
    assert claims(second) == claims(first)


def test_a_planted_pickle_in_the_cache_is_refused_and_runs_nothing(shared, tmp_path):
    cache, _ = shared
    entries = [p for p in cache.iterdir() if p.name.endswith("_instances.npz")]
    assert len(entries) == 1, f"expected one cached instances file, found {[p.name for p in cache.iterdir()]}"
    marker = tmp_path / "pwned.txt"
    planted = tmp_path / "planted.npz"
    original = entries[0].read_bytes()
    # The cached file with every array kept but the first one swapped for an object array whose
    # unpickling would write the marker: a reader that unpickled would run it.
    with zipfile.ZipFile(entries[0]) as source, zipfile.ZipFile(planted, "w") as archive:
        names = source.namelist()
        for i, name in enumerate(names):
            with archive.open(name, "w") as member:
                if i == 0:
                    np.lib.format.write_array(member, np.array([Planted(marker)], dtype=object), allow_pickle=True)
                else:
                    member.write(source.read(name))
    entries[0].write_bytes(planted.read_bytes())
    try:
        third = copy_workflow(tmp_path / "third")
        proc = run(third, cache, check=False)
    finally:
        entries[0].write_bytes(original)
    assert proc.returncode != 0, "the planted file was read as if it were data"
    assert not marker.exists(), "loading the cached file ran the planted code"
    assert "data error in results/lwe/data/instances.npz" in proc.stderr, proc.stderr[-2000:]
