"""Replacing one user file of a finished run reschedules exactly the jobs it feeds (issue 28), for the user paths
the other rerun tests leave out: a local ERA5 store (a folder: one chunk of it replaced), the metagenome's
local traits table, and SP-Bench-mini's task file. Each run is marked finished without running it
(``finished``), at user paths outside the fixture folders, after config/full.yaml."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from user_file_reruns import finished
from workflow_tools import copy_workflow, scheduled_rules

from repro.fixtures import era5

pytestmark = pytest.mark.e2e


def finished_copy(tmp_path: Path, overlay: str, target: str) -> tuple[Path, tuple[str, ...]]:
    work = copy_workflow(tmp_path / "repo")
    (work / "overlay.yaml").write_text(overlay)
    args = (target, "--configfile", "config/full.yaml", "overlay.yaml")
    finished(work, *args)
    assert scheduled_rules(work, *args) == {}, "a finished run must leave nothing to do"
    return work, args


def test_a_replaced_chunk_of_a_local_era5_store_reruns_the_conversion_and_mosaic(tmp_path):
    store = "user/era5/1959-2023_01_10-6h-64x32_equiangular_conservative.zarr"
    overlay = f"data:\n  era5:\n    source: local\n    local: {{path: {store}}}\n"
    fixture = tmp_path / "fixture"
    era5.write(fixture)
    work = copy_workflow(tmp_path / "repo")
    (work / "user/era5").mkdir(parents=True)
    (fixture / "wb2" / Path(store).name).rename(work / store)
    (work / "overlay.yaml").write_text(overlay)
    args = ("mosaic", "--configfile", "config/full.yaml", "overlay.yaml")
    finished(work, *args)
    assert scheduled_rules(work, *args) == {}
    chunk = next(p for p in sorted((work / store).rglob("*")) if p.is_file() and not p.name.startswith(".z"))
    chunk.write_bytes(chunk.read_bytes()[::-1])
    jobs = scheduled_rules(work, *args)
    assert jobs.get("era5_data") == 1
    assert {rule for rule in jobs if not rule.startswith("mosaic")} == {"era5_data", "provenance"}
    assert "mosaic_train" in jobs and "mosaic" in jobs
    assert "era5_sample" not in jobs, "the shipped ensemble sample does not read the user's store"


def test_a_replaced_metagenome_traits_table_reruns_the_source_and_hysomi(tmp_path):
    overlay = (
        "data:\n  metagenome:\n    source: local\n"
        "    local: {traits: user/traits.csv, observations: user/observations.tsv}\n"
    )
    work = copy_workflow(tmp_path / "repo")
    (work / "user").mkdir()
    traits = pd.DataFrame({"sample_id": ["s1", "s2", "s3"], "gc_content": [0.5, 0.6, 0.55]})
    traits.to_csv(work / "user/traits.csv", index=False)
    observations = pd.DataFrame({"sample_id": ["s1", "s2"], "time": [0, 7], "state": ["CO2", "MBC"], "value": [0, 0.4]})
    observations.to_csv(work / "user/observations.tsv", sep="\t", index=False)
    (work / "overlay.yaml").write_text(overlay)
    args = ("hysomi", "--configfile", "config/full.yaml", "overlay.yaml")
    finished(work, *args)
    assert scheduled_rules(work, *args) == {}
    traits.assign(gc_content=[0.51, 0.6, 0.55]).to_csv(work / "user/traits.csv", index=False)
    jobs = scheduled_rules(work, *args)
    assert jobs.get("metagenome_data") == 1
    assert {rule for rule in jobs if not rule.startswith("hysomi")} == {"metagenome_data", "provenance"}
    assert any(rule.startswith("hysomi_train_") for rule in jobs) and "hysomi" in jobs


def test_a_replaced_sp_bench_task_file_reruns_sp_mind_only(tmp_path):
    overlay = "papers:\n  sp-mind:\n    bench: {tasks_file: user/tasks.json}\n"
    work = copy_workflow(tmp_path / "repo")
    (work / "user").mkdir()
    (work / "user/tasks.json").write_text('[{"category": "a"}]\n')
    (work / "overlay.yaml").write_text(overlay)
    args = ("sp_mind", "--configfile", "config/full.yaml", "overlay.yaml")
    finished(work, *args)
    assert scheduled_rules(work, *args) == {}
    (work / "user/tasks.json").write_text('[{"category": "b"}]\n')
    jobs = scheduled_rules(work, *args)
    assert jobs and all(rule.startswith("sp_mind") or rule == "provenance" for rule in jobs), jobs
    assert jobs.get("sp_mind_data") == 1
