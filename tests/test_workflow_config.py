"""Config validation against the JSON schema, and DAG construction for both scales."""

import copy
import time

import pytest
import yaml
from workflow_tools import REPO, copy_workflow, place_user_data, snakemake

from repro.workflow.config import ConfigError, validate_config

SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


def _load(name):
    return yaml.safe_load((REPO / "config" / name).read_text())


def test_shipped_default_is_valid():
    """config/full.yaml is an overlay; its merge with the default is checked in test_config_overlay.py."""
    validate_config(_load("config.yaml"), SCHEMA)


@pytest.mark.parametrize(
    "edit,where",
    [
        (lambda c: c.update(sed=1), "<top level>: Additional properties are not allowed ('sed'"),
        (lambda c: c.update(scale="huge"), "config: scale: 'huge' is not one of"),
        (
            lambda c: c["papers"]["hysomi"].update(epochz=3),
            "papers.hysomi: Unevaluated properties are not allowed ('epochz'",
        ),
        (lambda c: c["papers"]["hysomi"].update(epochs=0), "papers.hysomi.epochs: 0 is less than the minimum of 1"),
        (lambda c: c["papers"]["hysomi"].update(lr="fast"), "papers.hysomi.lr: 'fast' is not of type 'number'"),
        (lambda c: c["data"]["metagenome"].update(source="ftp"), "data.metagenome.source: 'ftp' is not one of"),
        (
            lambda c: c["papers"].update(nosuchpaper={"enabled": True}),
            "papers: Additional properties are not allowed ('nosuchpaper'",
        ),
    ],
)
def test_bad_config_is_rejected_naming_the_key(edit, where):
    config = copy.deepcopy(_load("config.yaml"))
    edit(config)
    with pytest.raises(ConfigError) as err:
        validate_config(config, SCHEMA)
    assert where in str(err.value)


def test_snakemake_stops_on_a_bad_value(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    proc = snakemake(work, "-n", "--config", "seed=-3", check=False)
    assert proc.returncode != 0
    assert "config: seed: -3 is less than the minimum of 0" in proc.stderr + proc.stdout
    assert not (work / "results").exists()


@pytest.mark.parametrize("configfile", ["config/config.yaml", "config/full.yaml"])
def test_dag_builds(tmp_path, configfile):
    work = copy_workflow(tmp_path / "wf")
    place_user_data(work, configfile)
    start = time.perf_counter()
    proc = snakemake(work, "-n", "--configfile", configfile)
    print(f"dry-run {configfile}: {time.perf_counter() - start:.2f} s")
    assert "hysomi_train" in proc.stdout and "scoreboard" in proc.stdout
