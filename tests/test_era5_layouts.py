"""ERA5 stores laid out as the public ones are: WeatherBench2 and ARCO-ERA5 are zarr format 2, numcodecs Blosc LZ4
with byte shuffle, one time step per chunk (all levels and the whole grid in it), latitude 90 -> -90.

Each store is converted through the real entry (``convert`` with a ``file://`` URL) and the output compared
value for value with an independent reorientation of the source arrays read with zarr-python and numpy.
"""

from __future__ import annotations

import json
from pathlib import Path

import numcodecs
import numpy as np
import pandas as pd
import pytest
import xarray as xr
import zarr

from repro.data.era5.acquire import convert, source_readers
from repro.data.era5.canonical import Selection, canonicalise_indexed
from repro.data.era5.chunks import chunk_array
from repro.data.era5.readers import open_source
from repro.data.era5.writer import chunk_readers
from repro.workflow.io import InputError

LEVELS = [50, 250, 500, 850, 1000]
BLOSC = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)


def public_store(
    path: Path,
    *,
    lon180: bool = False,
    lon_first: bool = False,
    n_time: int = 10,
    fmt: int = 2,
    codec=BLOSC,
    filters=None,
) -> Path:
    """A WB2/ARCO-shaped store: surface and level variables, float32, time chunks of 1, latitude descending.

    ``lon180`` gives longitudes -180..180 (as some regridded copies use); ``lon_first`` stores dims as
    ``(time, level, longitude, latitude)``.
    """
    lat = np.linspace(90, -90, 9)
    lon = np.arange(-180, 180, 30.0) if lon180 else np.arange(0, 360, 30.0)
    rng = np.random.default_rng(1)
    spatial = ("longitude", "latitude") if lon_first else ("latitude", "longitude")
    sizes = {"latitude": lat.size, "longitude": lon.size}
    grid = tuple(sizes[d] for d in spatial)
    variables = {
        "geopotential": (("time", "level", *spatial), rng.normal(5e4, 3e3, (n_time, len(LEVELS), *grid))),
        "temperature": (("time", "level", *spatial), rng.normal(250, 20, (n_time, len(LEVELS), *grid))),
        "2m_temperature": (("time", *spatial), rng.normal(280, 10, (n_time, *grid))),
        "mean_sea_level_pressure": (("time", *spatial), rng.normal(1e5, 1e3, (n_time, *grid))),
    }
    ds = xr.Dataset(
        {k: (dims, v.astype(np.float32)) for k, (dims, v) in variables.items()},
        coords={
            "time": pd.date_range("2020-01-01", periods=n_time, freq="6h"),
            "level": np.asarray(LEVELS, np.int64),
            "latitude": lat,
            "longitude": lon,
        },
    ).chunk({"time": 1})
    encoding = {name: {"compressors": [codec]} | ({"filters": filters} if filters else {}) for name in ds.data_vars}
    ds.to_zarr(path, zarr_format=fmt, consolidated=True, encoding=encoding, mode="w")
    return path


def reoriented(path: Path, name: str, levels: list[int], times: slice) -> np.ndarray:
    """The canonical array computed without xarray: zarr arrays, numpy indexing, longitudes wrapped and sorted."""
    group = zarr.open_group(path, mode="r")
    data = group[name][times]
    dims = group[name].attrs.get("_ARRAY_DIMENSIONS") or list(group[name].metadata.dimension_names)
    lat, lon = group["latitude"][:], group["longitude"][:]
    if "level" in dims:
        data = data[:, [list(group["level"][:]).index(lev) for lev in levels]]
    axis = {d: i for i, d in enumerate(dims)}
    data = np.take(data, np.argsort(lat), axis=axis["latitude"])
    data = np.take(data, np.argsort(np.mod(lon, 360)), axis=axis["longitude"])
    order = [axis[d] for d in ("time", "level", "latitude", "longitude") if d in axis]
    return data.transpose(order)


def section(url: str, **extra) -> dict:
    return {
        "source": "remote",
        "remote": {"url": url},
        "variables": ["geopotential", "temperature", "2m_temperature"],
        "levels": [500, 850],
        "time": {"start": "2020-01-01T12", "end": "2020-01-03T00"},
        "chunk_time": 4,
    } | extra


def run(tmp_path: Path, src: Path, **extra) -> tuple[xr.Dataset, dict]:
    out = tmp_path / "out"
    record = convert(section(f"file://{src}", **extra), out / "era5.zarr", out / "stats.npz", out / "manifest.json")
    return xr.open_zarr(out / "era5.zarr"), record


@pytest.mark.parametrize(
    "layout",
    [{}, {"lon180": True}, {"lon_first": True}, {"fmt": 3, "codec": zarr.codecs.BloscCodec(cname="lz4")}],
    ids=["arco-format2", "format2-lon180", "format2-lon-before-lat", "format3-blosc"],
)
def test_public_layout_converts_to_the_reoriented_source(tmp_path, layout):
    src = public_store(tmp_path / "src.zarr", **layout)
    out, record = run(tmp_path, src)
    times = slice(2, 9)  # 2020-01-01T12 .. 2020-01-03T00 at 6 h
    assert record["n_times"] == 7 and out.sizes["time"] == 7
    for name in ("geopotential", "temperature", "2m_temperature"):
        expect = reoriented(src, name, [500, 850], times)
        np.testing.assert_array_equal(out[name].values, expect, err_msg=name)
        assert out[name].dtype == np.float32
    assert out.latitude.values[0] == -90 and np.all(np.diff(out.longitude) > 0) and out.longitude.min() >= 0
    meta = json.loads((tmp_path / "out" / "era5.zarr" / "geopotential" / "zarr.json").read_text())
    codecs = [c["name"] for c in meta["codecs"]]
    assert (
        meta["zarr_format"] == 3
        and codecs == ["bytes", "blosc"]
        and meta["chunk_grid"]["configuration"]["chunk_shape"] == [4, 2, 9, 12]
    )


def test_format2_source_codec_does_not_leak_into_the_output(tmp_path):
    """A numcodecs compressor on the source used to reach the format-3 output encoding (TypeError)."""
    src = public_store(tmp_path / "src.zarr")
    raw = open_source(f"file://{src}", lazy=True)
    assert isinstance(raw["geopotential"].encoding["compressors"][0], numcodecs.Blosc)
    out, _ = run(tmp_path, src)
    assert out.geopotential.encoding["compressors"][0].cname.value == "lz4"


def test_chunk_reader_matches_xarray_for_every_selection(tmp_path):
    src = public_store(tmp_path / "src.zarr", lon180=True)
    raw = open_source(str(src), lazy=True)
    ds, plan = canonicalise_indexed(raw, Selection(["geopotential", "2m_temperature"], [850, 50], step_hours=12), "s")
    readers = chunk_readers(src, plan)
    assert source_readers(section(f"file://{src}"), f"file://{src}", plan) is not None
    for name in ("geopotential", "2m_temperature"):
        for sl in (slice(0, 2), slice(3, 5)):
            np.testing.assert_array_equal(readers[name](sl), ds[name][sl].values.astype(np.float32))


def test_unsupported_codec_falls_back_to_xarray_with_equal_values(tmp_path):
    zlib = public_store(tmp_path / "zlib.zarr", codec=numcodecs.Zlib(level=1))
    filtered = public_store(tmp_path / "filt.zarr", filters=[numcodecs.Delta(dtype="<f4")])
    assert chunk_array(zlib, "geopotential") is not None  # any numcodecs compressor is read directly
    assert chunk_array(filtered, "geopotential") is None  # filters are not: zarr-python reads those
    for src in (zlib, filtered):
        out, _ = run(tmp_path / src.stem, src)
        np.testing.assert_array_equal(out.geopotential.values, reoriented(src, "geopotential", [500, 850], slice(2, 9)))


def test_missing_chunk_reads_as_fill_value_and_is_refused(tmp_path):
    src = public_store(tmp_path / "src.zarr")
    (src / "temperature" / "4.0.0.0").unlink()
    with pytest.raises(InputError, match=r"missing \(NaN\) values in 'temperature' .*first at \['2020-01-02T00"):
        run(tmp_path, src)
