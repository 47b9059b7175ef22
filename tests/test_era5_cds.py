"""The CDS API path without the internet: a stand-in ``cdsapi`` module writes what the CDS returns."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from repro.data.era5.acquire import convert
from repro.workflow.io import InputError


def fake_cdsapi(requests: list) -> types.ModuleType:
    """A module whose Client().retrieve writes a NetCDF laid out as the new CDS does (valid_time, pressure_level)."""

    class Client:
        def retrieve(self, dataset, request, target):
            requests.append((dataset, request))
            times = pd.date_range(request["date"].split("/")[0], request["date"].split("/")[1] + "T18", freq="6h")
            levels = [float(x) for x in request["pressure_level"]]
            lat, lon = np.arange(90, -91, -30.0), np.arange(-180, 180, 60.0)
            data = np.random.default_rng(0).normal(size=(len(times), len(levels), lat.size, lon.size))
            ds = xr.Dataset(
                {"z": (("valid_time", "pressure_level", "latitude", "longitude"), data)},
                coords={"valid_time": times, "pressure_level": levels, "latitude": lat, "longitude": lon},
            )
            ds.to_netcdf(target, engine="h5netcdf")

    return types.SimpleNamespace(Client=Client)


def section(tmp_path: Path, key_file: Path) -> dict:
    return {
        "source": "cds",
        "variables": ["geopotential"],
        "levels": [500, 850],
        "time": {"start": "2020-01-01", "end": "2020-01-02", "step_hours": 6},
        "cds": {"key_file": str(key_file), "grid_degrees": 1.5},
        "chunk_time": 4,
    }


def test_cds_request_and_canonical_output(tmp_path, monkeypatch):
    requests: list = []
    monkeypatch.setitem(sys.modules, "cdsapi", fake_cdsapi(requests))
    key = tmp_path / "cdsapirc"
    key.write_text("url: https://cds.example\nkey: secret\n")
    out = tmp_path / "out"
    record = convert(section(tmp_path, key), out / "era5.zarr", out / "stats.npz", out / "manifest.json")
    dataset, request = requests[0]
    assert dataset == "reanalysis-era5-pressure-levels"
    assert request["variable"] == ["geopotential"] and request["pressure_level"] == ["500", "850"]
    assert request["date"] == "2020-01-01/2020-01-02" and request["time"] == ["00:00", "06:00", "12:00", "18:00"]
    ds = xr.open_zarr(out / "era5.zarr")
    assert ds.geopotential.dims == ("time", "level", "latitude", "longitude") and ds.sizes["time"] == 8
    assert ds.latitude.values[0] == -90 and ds.longitude.values.min() == 0
    assert record["kind"] == "cds" and "secret" not in (out / "manifest.json").read_text()


def test_missing_cds_key_file_is_named(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "cdsapi", fake_cdsapi([]))
    with pytest.raises(InputError, match="nokey.*CDS API key file does not exist"):
        convert(
            section(tmp_path, tmp_path / "nokey"),
            tmp_path / "o" / "e.zarr",
            tmp_path / "o" / "s.npz",
            tmp_path / "o" / "m.json",
        )
