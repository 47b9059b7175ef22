"""cgmt-erm: the stages on a tiny configuration, determinism, and bad input."""

import copy
import json
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
import zarr
from conftest import REPO

from repro.papers.cgmt_erm import data, evaluate, train
from repro.papers.cgmt_erm.store import read, train_arrays
from repro.reporting.registry import load_reported
from repro.workflow.io import InputError
from repro.workflow.stores import open_zarr_group


@pytest.fixture(scope="module")
def tiny(repo, tmp_path_factory):
    s = copy.deepcopy(yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["cgmt-erm"])
    s.update(
        p=[20],
        p_sweep=[12, 20],
        folds=2,
        ratios=[2],
        reps=6,
        n_test=400,
        losses=["square", "logistic"],
        ridge_check={"n": 40, "p": 5, "sigma": 0.5, "reps": 30},
    )
    return s, tmp_path_factory.mktemp("cgmt")


def run_data(s, out):
    job = SimpleNamespace(
        output=SimpleNamespace(store=str(out / "designs.zarr"), manifest=str(out / "manifest.json")),
        params=SimpleNamespace(settings=s, seed=0),
    )
    data.main(job)
    return json.loads((out / "manifest.json").read_text())


def test_stages_end_to_end(tiny):
    s, out = tiny
    manifest = run_data(s, out)
    group = open_zarr_group(out / "designs.zarr", "mixture/p20")
    assert group["X_train"].shape == (6, 40, 20) and group["X_test"].shape == (400, 20)
    fits = []
    for design in s["designs"]:
        path = out / f"{design}.zarr"
        train.main(
            SimpleNamespace(
                input=SimpleNamespace(store=str(out / "designs.zarr")),
                output=SimpleNamespace(fits=str(path)),
                params=SimpleNamespace(settings=s),
                wildcards=SimpleNamespace(design=design),
                threads=1,
            )
        )
        fits.append(str(path))
    job = SimpleNamespace(
        input=SimpleNamespace(
            store=str(out / "designs.zarr"), fits=fits, reported=str(REPO / "resources/cgmt-erm/reported.yaml")
        ),
        output=SimpleNamespace(metrics=str(out / "m.json"), claims=str(out / "c.json"), curves=str(out / "laws.npz")),
        params=SimpleNamespace(settings=s, scale="smoke"),
    )
    evaluate.main(job)
    claims = json.loads((out / "c.json").read_text())["claims"]
    assert {c["verdict"] for c in claims} <= {"pass", "fails"}
    assert all(c["ours"] is not None for c in claims)
    assert {c["kind"] for c in claims} == {"paper", "check"}
    (out / "again").mkdir()
    assert run_data(s, out / "again")["sha256"] == manifest["sha256"]


def test_missing_variable_names_store_and_variable(tmp_path):
    root = zarr.open_group(tmp_path / "bad.zarr", mode="w")
    group = root.require_group("mixture/p20")
    group.create_array("X_test", data=np.zeros((3, 2)))
    with pytest.raises(InputError, match="bad.zarr.*lacks variable 'X_train'"):
        read(open_zarr_group(tmp_path / "bad.zarr", "mixture/p20"), "X_train", tmp_path / "bad.zarr")
    with pytest.raises(InputError, match="lacks variable 'X_train'"):
        train_arrays(open_zarr_group(tmp_path / "bad.zarr", "mixture/p20"), tmp_path / "bad.zarr")
    with pytest.raises(InputError, match="has no group 'iid_t/p20'"):
        open_zarr_group(tmp_path / "bad.zarr", "iid_t/p20")
    with pytest.raises(InputError, match="missing.zarr"):
        open_zarr_group(tmp_path / "missing.zarr")


def test_failed_stage_leaves_no_output(tiny, tmp_path):
    s, out = tiny
    bad = tmp_path / "fits.zarr"
    job = SimpleNamespace(
        input=SimpleNamespace(store=str(tmp_path / "nowhere.zarr")),
        output=SimpleNamespace(fits=str(bad)),
        params=SimpleNamespace(settings=s),
        wildcards=SimpleNamespace(design="mixture"),
        threads=1,
    )
    with pytest.raises(InputError):
        train.main(job)
    assert not bad.exists()


def test_reported_numbers_file_is_validated(tmp_path):
    bad = tmp_path / "reported.yaml"
    bad.write_text("slug: cgmt-erm\n")
    with pytest.raises(InputError, match="reported.yaml: needs a 'reported' mapping"):
        load_reported(bad)


@pytest.mark.parametrize("config_file", ["config/config.yaml", "config/full.yaml"])
def test_config_section_validates_and_typos_are_named(repo, config_file):
    from repro.workflow.config import ConfigError, load_config, validate_config

    section = load_config(config_file)["papers"]["cgmt-erm"]
    config = {"scale": "smoke", "seed": 0, "device": "cpu", "papers": {"cgmt-erm": section}, "data": {}}
    schema = repo / "workflow/schemas/config.schema.yaml"
    validate_config(config, schema)
    config["papers"]["cgmt-erm"] = {**section, "sedds": [0]}
    with pytest.raises(ConfigError, match="papers.cgmt-erm"):
        validate_config(config, schema)


def test_train_rerun_after_a_crash_equals_an_uninterrupted_run(tiny, tmp_path, monkeypatch):
    """The fits are deterministic (no random state): a train job killed inside its fitting loop leaves no
    output, and the rerun writes the same fits bit for bit as an uninterrupted run."""
    s, out = tiny
    if not (out / "designs.zarr").exists():
        run_data(s, out)

    def job(path):
        return SimpleNamespace(
            input=SimpleNamespace(store=str(out / "designs.zarr")),
            output=SimpleNamespace(fits=str(path)),
            params=SimpleNamespace(settings=s),
            wildcards=SimpleNamespace(design="mixture"),
            threads=1,
        )

    train.main(job(tmp_path / "clean.zarr"))
    original, calls = train.erm.fit, []

    def crash(*a, **k):
        calls.append(1)
        if len(calls) == 10:
            raise RuntimeError("killed")
        return original(*a, **k)

    monkeypatch.setattr(train.erm, "fit", crash)
    with pytest.raises(RuntimeError, match="killed"):
        train.main(job(tmp_path / "resumed.zarr"))
    assert not (tmp_path / "resumed.zarr").exists()
    monkeypatch.setattr(train.erm, "fit", original)
    train.main(job(tmp_path / "resumed.zarr"))
    clean, resumed = (
        zarr.open_group(tmp_path / "clean.zarr", mode="r"),
        zarr.open_group(tmp_path / "resumed.zarr", mode="r"),
    )
    keys = sorted(k for k, _ in clean.arrays()) + [f"p{p}/{k}" for p in (12, 20) for k, _ in clean[f"p{p}"].arrays()]
    assert len(keys) > 3
    for key in keys:
        np.testing.assert_array_equal(np.asarray(clean[key]), np.asarray(resumed[key]))
