"""Conversion throughput: ours against the naive xarray path and a raw copy of the same bytes.

Builds a WeatherBench2-shaped local store of about ``--size-gb`` (two pressure-level variables, 13 levels,
121 x 240 with poles, latitude descending as in WB2's 0.25° stores, one time step per chunk, Blosc LZ4
as WB2) in ``--dir``,
then times three conversions into canonical layout (latitude ascending):
- raw: ``shutil.copytree`` of the store plus ``os.sync`` (what the disk allows);
- naive: ``xarray.open_zarr(...).isel(latitude=reversed).to_zarr(...)``;
- ours: ``repro.data.era5.acquire.convert`` (same selection, via a ``file://`` URL).
Prints MB/s of source bytes for each, and deletes everything it wrote.

    python benchmarks/era5_conversion.py --size-gb 1.0 --dir /tmp/era5_bench
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
import zarr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from repro.data.era5.acquire import convert  # noqa: E402
from repro.data.era5.writer import COMPRESSOR, store_bytes  # noqa: E402

VARIABLES = ("geopotential", "temperature")
LEVELS = [50, 100, 150, 200, 250, 300, 400, 500, 600, 700, 850, 925, 1000]


def build_source(path: Path, size_gb: float) -> None:
    """Write a WB2-like store with zarr directly (smooth fields plus noise, so compression behaves realistically)."""
    lat, lon = np.linspace(90, -90, 121), np.arange(240) * 1.5
    step_bytes = len(VARIABLES) * len(LEVELS) * lat.size * lon.size * 4
    n_time = int(np.ceil(size_gb * 1e9 / step_bytes))
    template = xr.Dataset(
        {
            v: (
                ("time", "level", "latitude", "longitude"),
                np.zeros((n_time, len(LEVELS), lat.size, lon.size), np.float32),
            )
            for v in VARIABLES
        },
        coords={
            "time": pd.date_range("2020-01-01", periods=n_time, freq="6h"),
            "level": LEVELS,
            "latitude": lat,
            "longitude": lon,
        },
    ).chunk({"time": 1, "level": -1, "latitude": -1, "longitude": -1})
    encoding = {v: {"compressors": [COMPRESSOR]} for v in VARIABLES}
    template.to_zarr(path, mode="w", compute=False, consolidated=True, zarr_format=3, encoding=encoding)
    group = zarr.open_group(path, mode="r+")
    rng = np.random.default_rng(0)
    base = (
        np.cos(np.deg2rad(lat))[None, :, None] * np.sin(np.deg2rad(lon))[None, None, :] * np.ones((len(LEVELS), 1, 1))
    )
    for t in range(n_time):
        for v in VARIABLES:
            group[v][t] = (base * 1000 + rng.normal(size=base.shape)).astype(np.float32)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    os.sync()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/era5_bench"))
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    work = args.dir
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        src = work / "source.zarr"
        build_source(src, args.size_gb)
        os.sync()
        nbytes = store_bytes(src)
        raw_s = timed(lambda: shutil.copytree(src, work / "raw.zarr"))
        shutil.rmtree(work / "raw.zarr")
        naive_s = timed(lambda: xr.open_zarr(src).isel(latitude=slice(None, None, -1)).to_zarr(work / "naive.zarr"))
        shutil.rmtree(work / "naive.zarr")
        section = {
            "source": "remote",
            "remote": {"url": f"file://{src}"},
            "variables": list(VARIABLES),
            "levels": LEVELS,
            "chunk_time": 1,
        }
        ours_s = timed(
            lambda: convert(
                section,
                work / "out" / "era5.zarr",
                work / "out" / "stats.npz",
                work / "out" / "manifest.json",
                workers=args.workers,
            )
        )
        print(
            f"zarr {zarr.__version__}, xarray {xr.__version__}, source {nbytes / 1e6:.0f} MB on disk, "
            f"{os.cpu_count()} CPUs, {args.workers} workers"
        )
        for name, seconds in (("raw copy", raw_s), ("naive xarray", naive_s), ("ours", ours_s)):
            print(f"{name:>13}: {seconds:7.2f} s  {nbytes / 1e6 / seconds:8.1f} MB/s")
        print(f"ours / naive: {naive_s / ours_s:.2f}x   ours / raw copy: {raw_s / ours_s:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
