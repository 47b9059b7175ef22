"""The paper's stages end to end on a tiny embedded run, called as the rules call them (without Snakemake)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest
import xarray as xr
import yaml

from repro.data.era5 import acquire, sample
from repro.papers.mosaic import attention_cost, evaluate, figures, train

REPO = Path(__file__).resolve().parents[1]


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
    s["model"] |= {"width": 16, "depth": 1, "heads": 2, "kv_heads": 1, "patch": 2, "tile": [2, 2], "local_block": 16}
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
        train.main(
            NS(
                params=common,
                wildcards=NS(variant=variant),
                threads=1,
                input=NS(store=str(store), norm_stats=str(stats)),
                output=NS(model=str(tmp / f"{variant}.pt"), history=str(tmp / f"{variant}.json")),
            )
        )
    attention_cost.main(NS(params=common, output=NS(cost=str(tmp / "cost.json"))))
    outputs = {f"forecast_{v}": str(tmp / f"fc_{v}.zarr") for v in ("mosaic", "dense", "mse")}
    evaluate.main(
        NS(
            params=common,
            input=NS(
                store=str(store),
                norm_stats=str(stats),
                sample=str(tmp / "sample.zarr"),
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
    assert all(c["verdict"] in ("pass", "fails") and c["test_text"] for c in claims)
    metrics = json.loads((run / "metrics.json").read_text())
    assert set(metrics["scores"]) == {"mosaic", "dense", "mse", "persistence", "climatology"}
    assert len(metrics["wavelength_km"]) == 8
    persistence = metrics["scores"]["persistence"]["rmse_mean"][0]
    assert persistence[0] < persistence[-1]  # error grows with lead
    for name in ("spectral_ratio", "skill", "attention_cost"):
        assert (run / f"{name}.png").stat().st_size > 1000


def test_one_checkpoint_per_variant_keyed_by_code_and_settings(run):
    assert len(list((run / "ckpt").glob("mosaic-*.pt"))) == 1
