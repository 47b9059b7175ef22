"""The ERA5 source on its rehearsal fixtures (repro.fixtures.era5, the WeatherBench2 and ARCO-ERA5 layouts) through
the same reader as the download: both stores end in the canonical layout, and missing values (NaN, the stores'
fill value) are counted, kept out of the normalisation and refused above the configured fraction."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml
import zarr

from repro.data.era5.acquire import convert
from repro.fixtures import era5 as fixture
from repro.workflow.io import InputError

FULL = yaml.safe_load(Path("config/full.yaml").read_text())["data"]["era5"]


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("era5")
    fixture.write(root)
    return root


def local(path: Path, **extra) -> dict:
    return FULL | {"source": "local", "local": {"path": str(path)}} | extra


def test_the_weatherbench2_fixture_converts_with_the_full_scale_selection(stores, tmp_path):
    src = stores / "wb2" / fixture.WB2_NAME
    record = convert(local(src), tmp_path / "era5.zarr", tmp_path / "stats.npz", tmp_path / "manifest.json", workers=1)
    assert record["n_times"] == 68 and len(record["channels"]) == 4 + 6 * 13
    assert record["missing"] == {} and record["inputs"][0]["sha256"] and record["inputs"][0]["bytes"] > 0
    out = xr.open_zarr(tmp_path / "era5.zarr")
    source = xr.open_zarr(src)
    np.testing.assert_allclose(out["geopotential"].sel(level=500).values, source["geopotential"].sel(level=500).values)
    assert np.all(np.diff(out["latitude"].values) > 0)


def test_the_arco_fixture_converts_through_the_same_reader(stores, tmp_path):
    src = stores / "arco" / fixture.ARCO_NAME
    record = convert(local(src), tmp_path / "era5.zarr", tmp_path / "stats.npz", tmp_path / "manifest.json", workers=1)
    assert record["n_times"] == 4  # hourly -> 6-hourly
    out = xr.open_zarr(tmp_path / "era5.zarr")
    source = xr.open_zarr(src)
    assert list(out["level"].values) == FULL["levels"]
    # ARCO stores latitude 90 -> -90; the canonical store is ascending
    np.testing.assert_allclose(
        out["temperature"].isel(time=0).sel(level=850).values,
        source["temperature"].isel(time=0).sel(level=850).values[::-1],
    )


def with_missing(src: Path, dst: Path, fraction: float) -> Path:
    """A copy of the WB2 fixture with NaN (the fill value a source writes for missing data) in 2m_temperature."""
    import shutil

    shutil.copytree(src, dst)
    arr = zarr.open_array(dst / "2m_temperature", mode="r+")
    values = arr[:]
    flat = values.reshape(-1)
    flat[: int(fraction * flat.size)] = np.nan
    arr[:] = values
    return dst


def test_missing_values_are_counted_and_kept_out_of_the_statistics(stores, tmp_path):
    src = with_missing(stores / "wb2" / fixture.WB2_NAME, tmp_path / "missing.zarr", 0.01)
    record = convert(
        local(src, max_missing_fraction=0.05), tmp_path / "e.zarr", tmp_path / "s.npz", tmp_path / "m.json", workers=1
    )
    missing = record["missing"]["2m_temperature"]
    assert missing["count"] == int(0.01 * 68 * 32 * 64) and missing["first_times"]
    stats = np.load(tmp_path / "s.npz")
    index = list(stats["channels"]).index("2m_temperature")
    assert np.isfinite(stats["state_mean"][index]) and np.isfinite(stats["state_std"][index])
    assert np.isnan(xr.open_zarr(tmp_path / "e.zarr")["2m_temperature"].values).sum() == missing["count"]
    assert json.loads((tmp_path / "m.json").read_text())["missing"]["2m_temperature"]["count"] == missing["count"]


def test_missing_values_above_the_configured_fraction_stop_the_conversion(stores, tmp_path):
    src = with_missing(stores / "wb2" / fixture.WB2_NAME, tmp_path / "missing.zarr", 0.01)
    with pytest.raises(InputError, match="missing .NaN. values in '2m_temperature'"):
        convert(local(src), tmp_path / "e.zarr", tmp_path / "s.npz", tmp_path / "m.json", workers=1)
    assert not (tmp_path / "e.zarr").exists()
