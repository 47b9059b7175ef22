"""The paper's stages end to end on a tiny embedded run, called as the rules call them (without Snakemake)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest
import torch
import xarray as xr
import yaml
from interrupt import Interrupted, interrupted_at

from repro.data.era5 import acquire, sample
from repro.papers.mosaic import attention_cost, evaluate, figures, train

REPO = Path(__file__).resolve().parents[1]


def train_job(params, variant, store, stats, out, name=None):
    name = name or variant
    return NS(
        params=params,
        wildcards=NS(variant=variant),
        threads=1,
        input=NS(store=str(store), norm_stats=str(stats), code=[train.__file__]),
        output=NS(model=str(out / f"{name}.pt"), history=str(out / f"{name}.json")),
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mosaic")
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    data = copy.deepcopy(config["data"]["era5"])
    data["embedded"] |= {"nlat": 16, "days": 12, "spinup_days": 1}
    s = copy.deepcopy(config["papers"]["mosaic"])
    s["splits"] = {
        "train": ["2000-01-01", "2000-01-07T18"],
        "val": ["2000-01-08", "2000-01-09T18"],
        "test": ["2000-01-10", "2000-01-12T18"],
    }
    s["variants"] = ["mosaic", "dense", "mse"]
    s["model"] |= {"width": 16, "depth": 1, "heads": 2, "kv_heads": 1, "patch": 1, "tile": [2, 2], "local_block": 16}
    s["train"] |= {"epochs": 1, "batch_size": 8}
    s["evaluate"] |= {"members": 3, "lead_steps": 4, "max_wavenumber": 7}
    s["attention_cost"] |= {"tokens": [64, 128], "repeats": 1}
    store, stats, manifest = tmp / "era5.zarr", tmp / "norm_stats.npz", tmp / "manifest.json"
    acquire.convert(data, store, stats, manifest)
    sample.main(
        NS(
            input=NS(grib=str(REPO / "resources/era5/era5-levels-members.grib")),
            output=NS(store=str(tmp / "sample.zarr"), manifest=str(tmp / "sample.json")),
        )
    )
    common = NS(settings=s, seed=0, device="cpu", checkpoints=str(tmp / "ckpt"), scale="smoke")
    for variant in ("mosaic", "dense", "mse"):
        train.main(train_job(common, variant, store, stats, tmp))
    attention_cost.main(NS(params=common, output=NS(cost=str(tmp / "cost.json"))))
    outputs = {f"forecast_{v}": str(tmp / f"fc_{v}.zarr") for v in ("mosaic", "dense", "mse")}
    evaluate.main(
        NS(
            params=common,
            input=NS(
                store=str(store),
                norm_stats=str(stats),
                sample=str(tmp / "sample.zarr"),
                cost=str(tmp / "cost.json"),
                reported=str(REPO / "resources/mosaic/reported.yaml"),
                **{v: str(tmp / f"{v}.pt") for v in ("mosaic", "dense", "mse")},
            ),
            output=NS(metrics=str(tmp / "metrics.json"), claims=str(tmp / "claims.json"), **outputs),
        )
    )
    figures.main(
        NS(
            params=common,
            input=NS(metrics=str(tmp / "metrics.json"), cost=str(tmp / "cost.json")),
            output=NS(**{k: str(tmp / f"{k}.png") for k in ("spectral_ratio", "skill", "attention_cost")}),
        )
    )
    (tmp / "settings.json").write_text(json.dumps(s))
    return tmp


def test_forecast_store_has_the_wb2_layout(run):
    ds = xr.open_zarr(run / "fc_mosaic.zarr")
    assert ds.geopotential.dims == ("time", "member", "prediction_timedelta", "level", "latitude", "longitude")
    assert ds.sizes["member"] == 3 and ds.sizes["prediction_timedelta"] == 4
    assert ds.prediction_timedelta.values[0] == np.timedelta64(6, "h")
    assert xr.open_zarr(run / "fc_mse.zarr").sizes["member"] == 1
    assert 4e4 < float(ds.geopotential.mean()) < 1.2e5  # physical units, not normalised


def test_claims_and_metrics_are_computed(run):
    claims = json.loads((run / "claims.json").read_text())["claims"]
    by_id = {c["id"]: c for c in claims}
    assert by_id["block_sparse_equals_dense"]["verdict"] == "pass"
    assert by_id["fair_crps_rank_equals_pairwise"]["verdict"] == "pass"
    assert all(c["verdict"] in ("pass", "fails", "inconclusive") and c["test_text"] for c in claims)
    assert by_id["learn_mosaic"]["verdict"] in ("pass", "fails")  # a learning check is never inconclusive
    metrics = json.loads((run / "metrics.json").read_text())
    assert set(metrics["scores"]) == {"mosaic", "dense", "mse", "persistence", "climatology"}
    assert len(metrics["wavelength_km"]) == 8
    persistence = metrics["scores"]["persistence"]["rmse_mean"][0]
    assert persistence[0] < persistence[-1]  # error grows with lead
    for name in ("spectral_ratio", "skill", "attention_cost"):
        assert (run / f"{name}.png").stat().st_size > 1000


def test_checkpoints_are_removed_once_the_model_is_written(run):
    assert not list((run / "ckpt").glob("*.pt"))


def test_interrupted_training_resumes_bit_for_bit(run, tmp_path, monkeypatch):
    """Raised inside the loop at epoch 2 (after the epoch-1 checkpoint), rerun: the same weights."""
    s = copy.deepcopy(json.loads((run / "settings.json").read_text()))
    s["train"] |= {"epochs": 3, "patience": 5}
    params = NS(settings=s, seed=0, device="cpu", checkpoints=str(tmp_path / "ck"))
    monkeypatch.setattr(train, "CHECKPOINT_EVERY", 2)
    train.main(train_job(params, "mosaic", run / "era5.zarr", run / "norm_stats.npz", tmp_path, "reference"))
    with interrupted_at(monkeypatch, 2) as hits, pytest.raises(Interrupted):
        train.main(train_job(params, "mosaic", run / "era5.zarr", run / "norm_stats.npz", tmp_path, "resumed"))
    assert hits == [2] and list((tmp_path / "ck").glob("*.pt"))
    train.main(train_job(params, "mosaic", run / "era5.zarr", run / "norm_stats.npz", tmp_path, "resumed"))
    a, b = (torch.load(tmp_path / f"{n}.pt", weights_only=True) for n in ("reference", "resumed"))
    assert a["history"] == b["history"]
    for key in a["state"]:
        assert torch.equal(a["state"][key], b["state"][key]), key


class SideEffect:
    """Unpickling this runs code: what a poisoned file in a shared cache would carry."""

    def __reduce__(self):
        return (print, ("pwned",))


def test_a_model_file_that_would_run_code_is_refused(run, tmp_path):
    from repro.papers.mosaic.forecast import load_model
    from repro.workflow.io import InputError

    saved = torch.load(run / "mosaic.pt", weights_only=True)
    torch.save(saved | {"payload": SideEffect()}, tmp_path / "poisoned.pt")
    store = xr.open_zarr(run / "era5.zarr")
    with pytest.raises(InputError, match="tensors and plain data"):
        load_model(tmp_path / "poisoned.pt", store.latitude.values, store.longitude.values)
    model, _ = load_model(run / "mosaic.pt", store.latitude.values, store.longitude.values)
    assert sum(p.numel() for p in model.parameters()) > 0


def test_period_states_read_per_index_what_the_whole_period_holds(run):
    """Training reads the store per batch (PeriodStates): any index list, unordered and with repeats, gives
    the rows of the whole period's array bit for bit, and the streamed time mean (the evaluation's
    climatology) is the whole array's mean bit for bit, whatever the chunk. The whole array is read here
    independently of PeriodStates, as the stages read it before they streamed: the period at once, through
    dask, normalised with the store's statistics."""
    from repro.papers.mosaic.data import PeriodStates, load_norm_stats, load_period, stacked

    period = ("2000-01-01", "2000-01-07T18")
    stats = load_norm_stats(run / "norm_stats.npz")
    channels = [str(c) for c in stats["channels"]]
    raw = stacked(xr.open_zarr(run / "era5.zarr").sel(time=slice(*period)), channels)
    whole = ((raw - stats["state_mean"][None, :, None, None]) / stats["state_std"][None, :, None, None]).astype(
        np.float32
    )
    np.testing.assert_array_equal(load_period(run / "era5.zarr", run / "norm_stats.npz", period).states, whole)
    index = np.array([5, 0, 5, len(whole) - 1, 2])
    for in_memory_mb in (0, 1024):  # read per request, and held in memory
        states = PeriodStates(run / "era5.zarr", run / "norm_stats.npz", period, in_memory_mb=in_memory_mb)
        assert states.streamed == (in_memory_mb == 0) and len(states) == len(whole)
        np.testing.assert_array_equal(states[index], whole[index])
        for chunk in (1, 4, len(whole)):
            mean = states.time_mean(chunk)
            assert mean.dtype == np.float32
            np.testing.assert_array_equal(mean, whole.mean(axis=0))


def test_validation_in_chunks_is_the_mean_over_the_windows(run, tmp_path):
    """``val_batch_size`` splits validation into passes of that many windows (a paper-scale year of windows
    cannot be one pass): one pass covering every window gives the unset run's history bit for bit; passes of
    2 windows leave training alone (the same training losses) and score validation on fresh noise draws,
    close to the one-pass score."""
    s = json.loads((run / "settings.json").read_text())
    reference = json.loads((run / "mosaic.json").read_text())
    histories = {}
    for size in (10**6, 2):
        s["train"] |= {"val_batch_size": size}
        common = NS(settings=s, seed=0, device="cpu", checkpoints=str(tmp_path / f"ckpt{size}"), scale="smoke")
        out = tmp_path / str(size)
        out.mkdir()
        train.main(train_job(common, "mosaic", run / "era5.zarr", run / "norm_stats.npz", out))
        histories[size] = json.loads((out / "mosaic.json").read_text())
    assert histories[10**6] == reference
    chunked = histories[2]
    assert [e["loss"] for e in chunked] == [e["loss"] for e in reference]
    for ours, one_pass in zip(chunked, reference):
        assert ours["val"] != one_pass["val"] and ours["val"] == pytest.approx(one_pass["val"], rel=0.2)
