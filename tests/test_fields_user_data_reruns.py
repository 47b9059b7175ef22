"""A replaced user data file reruns exactly what it feeds (issue 28): the SEVIR files and catalog of PDRF, The Well
and PDEBench files of Flower, the FNO .mat file of GPO and the ERA5 store of the era5 source are inputs of the
stages that read them.

In a copy of the workflow, the fixture writers put files in the published layouts at the paths config/full.yaml
names (as a user would: not under data/fixtures/), the rehearsal's sizes keep the jobs small, the data stages
run, and then: an untouched run schedules nothing; replacing one file (new content, a valid file) schedules that
data stage again; replacing a file another paper reads does not.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
import yaml
from workflow_tools import copy_workflow, scheduled_rules, snakemake

from repro.fixtures import fno_mat, pdebench, sevir, the_well

pytestmark = pytest.mark.e2e
DATA_RULES = ["pdrf_data", "flower_data", "gpo_data"]


def user_overlay(rehearsal: dict) -> dict:
    """The rehearsal's sizes with its data locations moved from data/fixtures/ to full.yaml's own paths."""
    full = yaml.safe_load(Path("config/full.yaml").read_text())

    def strip(node, template):
        if isinstance(node, dict):
            return {k: strip(v, template.get(k, {}) if isinstance(template, dict) else {}) for k, v in node.items()}
        if isinstance(node, (str, list)) and "data/fixtures" in str(node):
            return template
        return node

    papers = {p: strip(rehearsal["papers"][p], full["papers"][p]) for p in ("pdrf", "flower", "gpo")}
    return {"papers": papers, "data": {}}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    work = copy_workflow(tmp_path_factory.mktemp("userdata") / "wf")
    sevir.write(work / "data/sevir")
    the_well.write(work / "data/the_well")
    pdebench.write(work / "data/pdebench")
    fno_mat.write(work / "data/fno")
    overlay = user_overlay(yaml.safe_load((work / "config/rehearsal.yaml").read_text()))
    (work / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    snakemake(work, "--cores", "2", *DATA_RULES, *ARGS, timeout=1800)
    return work


ARGS = ("--configfile", "config/full.yaml", "overlay.yaml")  # last: --configfile takes every name after it


def rewrite(path: Path) -> None:
    """A corrected version of an HDF5 file: same layout, one value changed, a new file put in place."""
    copy = path.with_name(path.name + ".new")
    shutil.copy(path, copy)
    with h5py.File(copy, "r+") as f:
        name = next((k for k in ("vil", "tensor", "u") if k in f), None) or f"t0_fields/{next(iter(f['t0_fields']))}"
        data = f[name]
        index = (0,) * data.ndim
        data[index] = np.asarray(data[index]) + 1
    copy.replace(path)


def test_an_untouched_run_schedules_nothing(workdir):
    assert scheduled_rules(workdir, *DATA_RULES, *ARGS) == {}


@pytest.mark.parametrize(
    "relative, rule",
    [
        ("data/sevir/data/vil/2019/SEVIR_VIL_STORMEVENTS_2019_0701_1231.h5", "pdrf_data"),
        ("data/the_well/shear_flow/data/test/shear_flow_Reynolds_1e4_Schmidt_1e0.hdf5", "flower_data"),
        ("data/pdebench/1D/Burgers/Train/1D_Burgers_Sols_Nu0.001.hdf5", "flower_data"),
        ("data/fno/ns_V1e-3_N5000_T50.mat", "gpo_data"),
    ],
)
def test_replacing_a_user_file_reruns_exactly_the_stage_that_reads_it(workdir, relative, rule):
    rewrite(workdir / relative)
    scheduled = scheduled_rules(workdir, *DATA_RULES, *ARGS)
    assert scheduled == {rule: 1}, scheduled
    snakemake(workdir, "--cores", "2", rule, *ARGS, timeout=1800)


def test_replacing_the_sevir_catalog_reruns_pdrf_data(workdir):
    catalog = workdir / "data/sevir/CATALOG.csv"
    catalog.write_text(catalog.read_text().replace("Heavy Rain", "Heavy rain"))
    assert scheduled_rules(workdir, *DATA_RULES, *ARGS) == {"pdrf_data": 1}
    snakemake(workdir, "--cores", "2", "pdrf_data", *ARGS, timeout=1800)


def test_a_missing_user_file_stops_the_run_before_any_job_naming_the_key(workdir):
    target = workdir / "data/sevir/data/vil/2019/SEVIR_VIL_STORMEVENTS_2019_0101_0630.h5"
    target.rename(target.with_suffix(".gone"))
    try:
        proc = snakemake(workdir, "-n", "pdrf_data", *ARGS, check=False)
        assert proc.returncode != 0
        assert "papers.pdrf.radar.sevir.files" in proc.stdout + proc.stderr
    finally:
        target.with_suffix(".gone").rename(target)
