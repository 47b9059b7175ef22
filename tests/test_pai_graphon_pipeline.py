"""pai-graphon: data layout, the stages on a tiny configuration, and bad input."""

import copy
import json
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
import zarr
from conftest import REPO

from repro.papers.pai_graphon import data, evaluate, masks, train
from repro.papers.pai_graphon.store import read_dataset
from repro.workflow.io import InputError


@pytest.fixture(scope="module")
def tiny(repo, tmp_path_factory):
    s = copy.deepcopy(yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["pai-graphon"])
    s.update(
        sizes={"n_train": 300, "n_test": 300, "digits_test_fraction": 0.3},
        widths=[32, 64, 128],
        seeds=[0, 1],
        batch_size=64,
        blocks=8,
        ntk={"width": 16, "points": 32, "densities": [0.1], "steps": 5, "train_batch": 16, "lr": 0.01, "seeds": [0, 1]},
    )
    out = tmp_path_factory.mktemp("pai")
    data.main(
        SimpleNamespace(
            output=SimpleNamespace(
                synthetic=str(out / "synthetic.zarr"),
                digits=str(out / "digits.zarr"),
                manifest=str(out / "manifest.json"),
            ),
            params=SimpleNamespace(settings=s, seed=0),
        )
    )
    return s, out


def test_canonical_layout(tiny):
    s, out = tiny
    syn, dig = read_dataset(out / "synthetic.zarr"), read_dataset(out / "digits.zarr")
    assert syn["X"].shape == (600, 64) and syn["informative_idx"] == [0, 1, 2, 3]
    X = syn["X"]
    np.testing.assert_array_equal(syn["y"], (X[:, 0] * X[:, 1] + X[:, 2] - X[:, 3] > 0).astype(int))
    assert dig["X"].shape == (1797, 64) and dig["n_classes"] == 10 and 0 <= dig["X"].min() and dig["X"].max() <= 1
    assert set(json.loads((out / "manifest.json").read_text())["sha256"]) == {"synthetic", "digits"}


def test_stages_end_to_end(tiny):
    s, out = tiny
    for name in ("synthetic", "digits"):
        masks.main(
            SimpleNamespace(
                input=SimpleNamespace(data=str(out / f"{name}.zarr")),
                output=SimpleNamespace(masks=str(out / f"masks_{name}.zarr")),
                params=SimpleNamespace(settings=s, device="cpu"),
            )
        )
    train.main(train_job(s, out, out / "train.json"))
    job = SimpleNamespace(
        input=SimpleNamespace(
            masks_synthetic=str(out / "masks_synthetic.zarr"),
            masks_digits=str(out / "masks_digits.zarr"),
            data_synthetic=str(out / "synthetic.zarr"),
            data_digits=str(out / "digits.zarr"),
            train=str(out / "train.json"),
            reported=str(REPO / "resources/pai-graphon/reported.yaml"),
        ),
        output=SimpleNamespace(metrics=str(out / "m.json"), claims=str(out / "c.json"), graphons=str(out / "g.zarr")),
        params=SimpleNamespace(settings=s, scale="smoke"),
    )
    evaluate.main(job)
    claims = {c["id"]: c for c in json.loads((out / "c.json").read_text())["claims"]}
    assert claims["zero_pixels_pruned_snip_digits"]["verdict"] == "pass"
    assert {c["verdict"] for c in claims.values()} <= {"pass", "fails"}
    g = zarr.open_group(str(out / "g.zarr"), mode="r")
    assert g["sorted_graphon"].shape == (2, 4, 3, 8, 8) and g["fsm_graphon"].shape == (2, 4, 3, 8, 8)
    assert {c["kind"] for c in claims.values()} == {"paper", "check"}


def train_job(s, out, path):
    return SimpleNamespace(
        input=SimpleNamespace(data=str(out / "synthetic.zarr")),
        output=SimpleNamespace(train=str(path)),
        params=SimpleNamespace(settings=s, device="cpu"),
    )


def test_training_rerun_after_a_crash_equals_an_uninterrupted_run(tiny, monkeypatch):
    """Raise inside the training loop (third run, step 3), rerun: train.json equals an uninterrupted run's."""
    s, out = tiny
    train.main(train_job(s, out, out / "clean.json"))
    original, calls = train.model.loss_fn, []

    def crash(*a, **k):
        calls.append(1)
        if len(calls) == 2 * s["ntk"]["steps"] + 3:
            raise RuntimeError("killed")
        return original(*a, **k)

    monkeypatch.setattr(train.model, "loss_fn", crash)
    with pytest.raises(RuntimeError, match="killed"):
        train.main(train_job(s, out, out / "resumed.json"))
    monkeypatch.setattr(train.model, "loss_fn", original)
    assert not (out / "resumed.json").exists()
    train.main(train_job(s, out, out / "resumed.json"))
    assert (out / "resumed.json").read_bytes() == (out / "clean.json").read_bytes()


def test_dataset_missing_variable(tmp_path):
    root = zarr.open_group(tmp_path / "bad.zarr", mode="w")
    root.create_array("X", data=np.zeros((4, 64), np.float32))
    with pytest.raises(InputError, match=r"bad.zarr: missing variable\(s\) \['y', 'split'\]"):
        read_dataset(tmp_path / "bad.zarr")


def test_dataset_inconsistent_shapes(tmp_path):
    root = zarr.open_group(tmp_path / "bad.zarr", mode="w")
    root.create_array("X", data=np.zeros((4, 64), np.float32))
    root.create_array("y", data=np.zeros(3, np.int64))
    root.create_array("split", data=np.zeros(4, np.uint8))
    with pytest.raises(InputError, match="inconsistent shapes"):
        read_dataset(tmp_path / "bad.zarr")


@pytest.mark.parametrize("config_file", ["config/config.yaml", "config/full.yaml"])
def test_config_section_validates_and_typos_are_named(repo, config_file):
    from repro.workflow.config import ConfigError, load_config, validate_config

    section = load_config(config_file)["papers"]["pai-graphon"]
    config = {"scale": "smoke", "seed": 0, "device": "cpu", "papers": {"pai-graphon": section}, "data": {}}
    schema = repo / "workflow/schemas/config.schema.yaml"
    validate_config(config, schema)
    config["papers"]["pai-graphon"] = {**section, "sedds": [0]}
    with pytest.raises(ConfigError, match="papers.pai-graphon"):
        validate_config(config, schema)
