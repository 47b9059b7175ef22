"""ERA5 acquisition without the internet: local stores that mimic real layouts go through the real code path."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from repro.data.era5.acquire import convert
from repro.data.era5.canonical import Selection, canonicalise
from repro.data.era5.readers import open_source
from repro.data.era5.writer import write_canonical
from repro.workflow.io import InputError

GRIB = Path(__file__).resolve().parents[1] / "resources" / "era5" / "era5-levels-members.grib"


def wb2_like(descending: bool = True, lon180: bool = True, n_time: int = 8) -> xr.Dataset:
    """A small store with the 0.25° WB2 quirks: latitude 90 -> -90, longitudes -180..180, an extra variable."""
    lat = np.linspace(90, -90, 7) if descending else np.linspace(-90, 90, 7)
    lon = np.arange(-180, 180, 45.0) if lon180 else np.arange(0, 360, 45.0)
    rng = np.random.default_rng(0)
    shape = (n_time, 3, lat.size, lon.size)
    coords = {
        "time": pd.date_range("2020-01-01", periods=n_time, freq="6h"),
        "level": [250, 500, 850],
        "latitude": lat,
        "longitude": lon,
    }
    return xr.Dataset(
        {
            "geopotential": (("time", "level", "latitude", "longitude"), rng.normal(size=shape)),
            "temperature": (("time", "level", "latitude", "longitude"), rng.normal(size=shape)),
            "2m_temperature": (("time", "latitude", "longitude"), rng.normal(size=shape[:1] + shape[2:])),
            "extra_variable": (("time", "latitude", "longitude"), rng.normal(size=shape[:1] + shape[2:])),
        },
        coords=coords,
    )


def section(url: str, **extra) -> dict:
    return {
        "source": "remote",
        "remote": {"url": url},
        "variables": ["geopotential", "2m_temperature"],
        "levels": [500, 850],
        "chunk_time": 2,
    } | extra


def outputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    return tmp_path / "out" / "era5.zarr", tmp_path / "out" / "norm_stats.npz", tmp_path / "out" / "manifest.json"


def test_remote_zarr_via_file_url_is_canonicalised(tmp_path):
    raw = wb2_like()
    raw.to_zarr(tmp_path / "wb2.zarr", consolidated=True)
    store, stats, manifest = outputs(tmp_path)
    record = convert(section(f"file://{tmp_path / 'wb2.zarr'}"), store, stats, manifest)
    out = xr.open_zarr(store)
    assert set(out.data_vars) == {"geopotential", "2m_temperature"}
    assert np.all(np.diff(out.latitude) > 0) and out.latitude[0] == -90
    assert out.longitude.min() >= 0 and out.longitude.max() < 360 and np.all(np.diff(out.longitude) > 0)
    assert out.geopotential.dtype == np.float32 and out.geopotential.dims == ("time", "level", "latitude", "longitude")
    assert out.level.values.tolist() == [500, 850]
    # the raw value at (lat 60, lon -90) must land at (lat 60, lon 270)
    expect = raw.geopotential.sel(level=850, latitude=60, longitude=-90).values.astype(np.float32)
    np.testing.assert_array_equal(out.geopotential.sel(level=850, latitude=60, longitude=270).values, expect)
    assert (store / "zarr.json").exists() and json.loads((store / "zarr.json").read_text()).get("consolidated_metadata")
    assert out.geopotential.encoding["chunks"][0] == 2
    assert record["channels"] == ["geopotential_500", "geopotential_850", "2m_temperature"]
    assert json.loads(manifest.read_text())["bytes"] > 0


def test_norm_stats_match_a_direct_computation(tmp_path):
    wb2_like().to_zarr(tmp_path / "wb2.zarr")
    store, stats_path, manifest = outputs(tmp_path)
    convert(section(str(tmp_path / "wb2.zarr")), store, stats_path, manifest)
    stats = np.load(stats_path)
    z500 = xr.open_zarr(store).geopotential.sel(level=500).values.astype(np.float64)
    assert stats["state_mean"][0] == pytest.approx(z500.mean(), abs=1e-6)
    assert stats["state_std"][0] == pytest.approx(z500.std(), rel=1e-5)
    # residuals are one-step differences within each time chunk (chunk_time 2: pairs (0,1), (2,3), ...)
    diffs = z500[1::2] - z500[0::2]
    assert stats["residual_std"][0] == pytest.approx(np.sqrt((diffs**2).mean() - diffs.mean() ** 2), rel=1e-5)


def test_netcdf_with_cds_names_reads_like_zarr(tmp_path):
    raw = wb2_like(descending=True, lon180=False).rename(
        {"geopotential": "z", "2m_temperature": "t2m", "level": "pressure_level", "time": "valid_time"}
    )
    raw.to_netcdf(tmp_path / "cds.nc", engine="h5netcdf")
    ds = canonicalise(
        open_source(str(tmp_path / "cds.nc")), Selection(["geopotential", "2m_temperature"], [500]), "cds.nc"
    )
    assert ds.geopotential.dims == ("time", "level", "latitude", "longitude")
    np.testing.assert_allclose(ds.geopotential.values[:, 0, ::-1], raw.z.sel(pressure_level=500).values, rtol=1e-6)


def test_grib_sample_reads_real_era5_members():
    ds = canonicalise(open_source(str(GRIB)), Selection(["geopotential", "temperature"], [500, 850]), str(GRIB))
    assert ds.geopotential.dims == ("time", "realization", "level", "latitude", "longitude")
    assert ds.sizes == {"time": 4, "realization": 10, "level": 2, "latitude": 61, "longitude": 120}
    assert ds.latitude.values[0] == -90 and ds.latitude.values[-1] == 90
    z500 = ds.geopotential.sel(level=500).values
    assert 4.5e4 < z500.mean() < 6e4  # geopotential in m2 s-2, not metres
    assert 200 < ds.temperature.sel(level=850).mean() < 300


def test_canonicalisation_is_idempotent(tmp_path):
    sel = Selection(["geopotential", "2m_temperature"], [500, 850])
    once = canonicalise(wb2_like(), sel, "a")
    twice = canonicalise(once, sel, "b")
    xr.testing.assert_identical(once, twice)


def test_store_that_does_not_exist(tmp_path):
    store, stats, manifest = outputs(tmp_path)
    with pytest.raises(InputError, match="nowhere.zarr.*does not exist"):
        convert(section(f"file://{tmp_path / 'nowhere.zarr'}"), store, stats, manifest)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda ds: ds.drop_vars("2m_temperature"), r"missing variable\(s\) \['2m_temperature'\]"),
        (lambda ds: ds.sel(level=[250, 500]), r"missing level\(s\) \[850\]"),
        (lambda ds: ds.rename({"latitude": "y"}), "wrong dims: no 'latitude'"),
    ],
)
def test_bad_store_names_the_problem_and_leaves_nothing(tmp_path, edit, message):
    edit(wb2_like()).to_zarr(tmp_path / "bad.zarr")
    store, stats, manifest = outputs(tmp_path)
    with pytest.raises(InputError, match=message) as err:
        convert(section(str(tmp_path / "bad.zarr")), store, stats, manifest)
    assert "bad.zarr" in str(err.value)
    assert not store.exists() and not manifest.exists() and not stats.exists()
    assert not list(store.parent.glob(".era5.zarr*")) if store.parent.exists() else True


def test_wrong_variable_dims(tmp_path):
    ds = wb2_like()
    ds["2m_temperature"] = ds["2m_temperature"].rename({"time": "step"})
    ds.to_zarr(tmp_path / "dims.zarr")
    store, stats, manifest = outputs(tmp_path)
    with pytest.raises(InputError, match=r"dims.zarr: wrong dims for '2m_temperature'"):
        convert(section(str(tmp_path / "dims.zarr")), store, stats, manifest)


def test_nan_in_a_chunk_stops_and_leaves_nothing(tmp_path):
    ds = wb2_like()
    ds["geopotential"][5, 1, 3, 2] = np.nan
    ds.to_zarr(tmp_path / "nan.zarr")
    store, stats, manifest = outputs(tmp_path)
    with pytest.raises(
        InputError, match=r"nan.zarr: 1 missing \(NaN\) values in 'geopotential' .*first at \['2020-01-02T06"
    ):
        convert(section(str(tmp_path / "nan.zarr")), store, stats, manifest)
    assert not store.exists() and not stats.exists() and not manifest.exists()
    assert not list(store.parent.glob(".era5.zarr*"))


class Killed(Exception):
    pass


def test_interrupted_conversion_resumes_from_last_complete_chunk(tmp_path):
    wb2_like(n_time=12).to_zarr(tmp_path / "src.zarr")
    ds = canonicalise(open_source(str(tmp_path / "src.zarr")), Selection(["geopotential"], [500]), "src")
    target = tmp_path / "out.zarr"

    def kill_after_third(index):
        if index == 2:
            raise Killed

    with pytest.raises(Killed):
        write_canonical(ds, target, where="src", source={}, chunk_time=2, workers=1, after_chunk=kill_after_third)
    assert not target.exists() and (tmp_path / ".out.zarr.partial").exists()
    written = []
    summary = write_canonical(ds, target, where="src", source={}, chunk_time=2, workers=1, after_chunk=written.append)
    resumed = summary["resumed_chunks"]
    assert resumed >= 3 and written == list(range(resumed, 6))
    np.testing.assert_array_equal(xr.open_zarr(target).geopotential.values, ds.geopotential.values)
    assert not (tmp_path / ".out.zarr.partial").exists()
