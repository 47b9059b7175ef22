"""Fixtures that grow with the config that reads them (repro.fixtures.sizes_for): the rehearsal reads each
writer's default files, and a point of the cost benchmark's path to paper scale reads files grown with its
sizes, so the path never asks a fixture for more than it holds (LWE's reduced samples, the source-free
regression paper's dSprites sample and MPI3D grid stopped the path at their default sizes)."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from repro.fixtures import sizes_for
from repro.workflow import cost as C
from repro.workflow.config import deep_merge, load_config

REPO = Path(__file__).resolve().parents[1]
SIZED = ("verde", "dsprites", "mpi3d")
OVERLAYS = ("config/full.yaml", "config/rehearsal.yaml")


def keys_of(slug: str) -> list[C.SizeKey]:
    import yaml

    rehearsal = yaml.safe_load((REPO / "config/rehearsal.yaml").read_text())
    return C.size_keys(rehearsal, load_config("config/full.yaml"), slug)


def config_at(slug: str, growth: float) -> dict:
    """The rehearsal's config with the paper's size keys at the path point where its fastest key grew ``growth``
    times (what benchmarks/full_scale_cost.py runs)."""
    keys = keys_of(slug)
    return deep_merge(load_config(*OVERLAYS), C.overlay_at(keys, C.step_for(keys, growth)))


def test_the_rehearsal_reads_each_sized_writers_default_files():
    """Under the rehearsal's own config every sized writer gets its defaults: the rehearsal's inputs are
    unchanged by sizing."""
    config = load_config(*OVERLAYS)
    for name in SIZED:
        writer = importlib.import_module(f"repro.fixtures.{name}")
        defaults = {k: p.default for k, p in inspect.signature(writer.write).parameters.items() if k != "root"}
        sizes = sizes_for(name, config)
        assert sizes and all(defaults[k] == v for k, v in sizes.items()), (name, sizes, defaults)


def test_a_writer_without_sizes_gets_none():
    assert sizes_for("kodak", load_config(*OVERLAYS)) == {}


def test_the_lwe_fixture_holds_what_training_reads_on_the_path(tmp_path):
    """At the path point that stopped the cost benchmark (the fastest key grown 2x), the VERDE fixture the rule
    writes holds LWE's largest N plus its test samples, read back through the paper's reader."""
    from repro.fixtures import stage
    from repro.papers.lwe.reader import read_verde

    config = config_at("lwe", 2.0)
    model = config["papers"]["lwe"]["model"]
    need = max(model["sizes"]) + model["test_samples"]
    sizes = sizes_for("verde", config)
    assert sizes["rows"] >= need > 600  # more than the default fixture holds
    out = tmp_path / "verde"
    job = SimpleNamespace(params=SimpleNamespace(fixture="verde", sizes=sizes), output=SimpleNamespace(root=str(out)))
    stage.main(job)
    arrays, _ = read_verde(str(out / "n256_logq20_binary"), tmp_path / "scratch")
    assert arrays["R_A"].shape[0] == sizes["rows"]


def test_the_sfda_fixtures_hold_what_the_paper_draws_on_the_path(tmp_path):
    """At a point where the source-free regression paper draws more than the default fixtures hold, dSprites
    holds its three disjoint splits and the MPI3D files hold the grid its config names (the reader's shape
    check), each image at its factor levels."""
    from repro.fixtures import dsprites, mpi3d
    from repro.papers.sfda_regression import benchmarks as bm

    config = config_at("sfda-regression", 4.0)
    section = config["papers"]["sfda-regression"]
    drawn = sum(section["samples"][k] for k in ("source", "target", "test"))
    count = sizes_for("dsprites", config)["count"]
    assert count >= drawn > dsprites.COUNT
    grid = sizes_for("mpi3d", config)["sizes"]
    assert grid == tuple(section["mpi3d"]["factor_sizes"]) != mpi3d.SIZES

    small = (2, 1, 1, 1, 1, 3, 4)  # a grown grid small enough to write here
    mpi3d.write(tmp_path / "mpi3d", sizes=small)
    idx = np.arange(int(np.prod(small)))
    refused = bm.Refused()
    _, level = bm.mpi3d_split(tmp_path / "mpi3d", "toy", "horizontal_axis", idx, 16, small, refused)
    assert np.allclose(level, np.unravel_index(idx, small)[5] / (small[5] - 1))
    with pytest.raises(Exception, match="expected uint8"):
        bm.mpi3d_split(tmp_path / "mpi3d", "toy", "horizontal_axis", idx[:2], 16, mpi3d.SIZES, bm.Refused())

    path = dsprites.write(tmp_path / "dsprites", count=drawn)[0]
    assert bm.dsprites_count(path) == drawn
