"""ERA5 conversion throughput from a WeatherBench2-shaped zarr format-2 store, cold page cache.

Builds in ``--dir`` a store laid out as WeatherBench2 writes it (zarr format 2, numcodecs Blosc LZ4 with
byte shuffle, one time step per chunk, latitude 90 -> -90, 121 x 240, 4 surface and 6 pressure-level
variables on 13 levels; smooth fields plus noise so that compression behaves realistically) of about
``--size-gb``, then runs, each in its own process after ``sync; echo 3 > /proc/sys/vm/drop_caches``:

- raw: ``cp -r`` of the store plus ``sync`` (what the disk allows);
- naive: ``xarray.open_zarr`` -> select levels 500/850 and the middle 80 % of time, flip latitude, float32,
  4 steps per chunk -> ``to_zarr``, then normalisation statistics with xarray from the written store;
- ours: ``repro.data.era5.acquire.convert`` on the same selection (``file://`` URL), statistics included.

Prints seconds, MB/s of source bytes, peak resident memory per process, the load average before each run,
library versions, and (``--codecs``) encode time and size of one output chunk under candidate codecs and
the per-chunk cost of writing through zarr-python in format 2 and 3 against a direct chunk write. Deletes
everything it wrote. Dropping the page cache needs root; without it the runs are warm and say so.

    python benchmarks/era5_conversion.py --size-gb 1.5 --dir /tmp/era5_bench --codecs
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(SCRIPTS))

from repro.data.era5.names import PRESSURE_LEVEL_VARIABLES  # noqa: E402

SURFACE = ("2m_temperature", "10m_u_component_of_wind", "10m_v_component_of_wind", "mean_sea_level_pressure")
LEVEL_VARS = PRESSURE_LEVEL_VARIABLES
LEVELS = [50, 100, 150, 200, 250, 300, 400, 500, 600, 700, 850, 925, 1000]
KEEP_LEVELS = [500, 850]
CHUNK_TIME = 4
SCALE = {"geopotential": 5e4, "temperature": 250.0, "specific_humidity": 1e-3, "mean_sea_level_pressure": 1e5}


def build_source(path: Path, size_gb: float) -> int:
    """Write the WB2-shaped store with zarr directly, about ``size_gb`` on disk; return its number of time steps.

    The step count is set from the compressed size of a first step (the noisy fields compress to about 0.75).
    """
    import numcodecs
    import pandas as pd
    import xarray as xr
    import zarr

    lat, lon = np.linspace(90, -90, 121), np.arange(240) * 1.5
    step_bytes = (len(LEVEL_VARS) * len(LEVELS) + len(SURFACE)) * lat.size * lon.size * 4
    n_time = int(np.ceil(size_gb * 1e9 / (step_bytes * _compressed_ratio(lat, lon))))
    dims3, dims4 = ("time", "latitude", "longitude"), ("time", "level", "latitude", "longitude")
    empty = np.zeros((n_time, 1, 1, 1), np.float32)
    variables = {v: (dims4, np.broadcast_to(empty, (n_time, len(LEVELS), 121, 240))) for v in LEVEL_VARS}
    variables |= {v: (dims3, np.broadcast_to(empty[..., 0], (n_time, 121, 240))) for v in SURFACE}
    coords = {"time": pd.date_range("2020-01-01", periods=n_time, freq="6h"), "level": LEVELS}
    template = xr.Dataset(variables, coords=coords | {"latitude": lat, "longitude": lon}).chunk({"time": 1})
    blosc = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    encoding = {v: {"compressors": [blosc]} for v in template.data_vars}
    template.to_zarr(path, mode="w", compute=False, consolidated=True, zarr_format=2, encoding=encoding)
    group = zarr.open_group(path, mode="r+")
    rng = np.random.default_rng(0)
    base = np.cos(np.deg2rad(lat))[:, None] * np.sin(np.deg2rad(lon))[None, :]
    for t in range(n_time):
        for v in LEVEL_VARS:
            group[v][t] = _level_field(rng, lat, lon, v)
        for v in SURFACE:
            group[v][t] = (SCALE.get(v, 10.0) * (1 + 0.01 * (base + rng.normal(size=base.shape)))).astype(np.float32)
    return n_time


def _compressed_ratio(lat: np.ndarray, lon: np.ndarray) -> float:
    """Blosc LZ4 compressed / raw size of one level variable's step of the benchmark's fields."""
    import numcodecs

    field = _level_field(np.random.default_rng(0), lat, lon, "temperature")
    blosc = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    return len(blosc.encode(field)) / field.nbytes


def _level_field(rng: np.random.Generator, lat: np.ndarray, lon: np.ndarray, name: str) -> np.ndarray:
    base = np.cos(np.deg2rad(lat))[:, None] * np.sin(np.deg2rad(lon))[None, :]
    field = base[None] * (1 + 0.1 * np.arange(len(LEVELS)))[:, None, None] + rng.normal(size=(13, lat.size, lon.size))
    return (SCALE.get(name, 10.0) * (1 + 0.01 * field)).astype(np.float32)


def middle_80(n_time: int) -> tuple[int, int]:
    skip = int(round(0.1 * n_time))
    return skip, n_time - skip


def run_naive(src: Path, out: Path) -> None:
    import xarray as xr

    ds = xr.open_zarr(src)
    start, stop = middle_80(ds.sizes["time"])
    ds = ds[list(SURFACE + LEVEL_VARS)].sel(level=KEEP_LEVELS).isel(time=slice(start, stop))
    ds = ds.isel(latitude=slice(None, None, -1)).astype(np.float32).chunk({"time": CHUNK_TIME})
    for var in ds.variables.values():
        var.encoding = {}
    ds.to_zarr(out / "era5.zarr", mode="w")
    written = xr.open_zarr(out / "era5.zarr")
    dims = ["time", "latitude", "longitude"]
    stats = {
        "mean": written.mean(dims).compute(),
        "std": written.std(dims).compute(),
        "residual_std": written.diff("time").std(dims).compute(),
    }
    assert all(np.isfinite(s[v]).all() for s in stats.values() for v in s.data_vars)


def run_ours(src: Path, out: Path, workers: int) -> None:
    import pandas as pd
    import xarray as xr

    from repro.data.era5.acquire import convert

    times = pd.DatetimeIndex(xr.open_zarr(src)["time"].values)
    start, stop = middle_80(len(times))
    section = {
        "source": "remote",
        "remote": {"url": f"file://{src}"},
        "variables": list(SURFACE + LEVEL_VARS),
        "levels": KEEP_LEVELS,
        "time": {"start": str(times[start]), "end": str(times[stop - 1])},
        "chunk_time": CHUNK_TIME,
    }
    record = convert(section, out / "era5.zarr", out / "stats.npz", out / "manifest.json", workers=workers)
    assert record["n_times"] == stop - start, record["n_times"]


def child(method: str, src: Path, out: Path, workers: int) -> None:
    """One timed run in this process; prints JSON with seconds and peak memory."""
    start = time.perf_counter()
    if method == "raw":
        subprocess.run(["cp", "-r", str(src), str(out / "copy.zarr")], check=True)
    elif method == "naive":
        run_naive(src, out)
    else:
        run_ours(src, out, workers)
    os.sync()
    seconds = time.perf_counter() - start
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    # VmHWM, not ru_maxrss: the latter survives exec and would report the parent's peak
    status = Path("/proc/self/status").read_text()
    peak = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))) / 1024
    if method == "raw":
        peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "cpu_s": cpu}))


def drop_caches() -> bool:
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def codec_choice(src: Path, work: Path) -> None:
    """Encode cost and size of one 4-step output chunk per codec; per-chunk write cost by route."""
    import numcodecs
    import zarr

    group = zarr.open_group(src, mode="r")
    block = np.ascontiguousarray(group["geopotential"][:CHUNK_TIME, [7, 10]][:, :, ::-1], np.float32)
    codecs = {
        "blosc-lz4-shuffle": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
        "blosc-zstd3-shuffle": numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.SHUFFLE),
        "zstd3": numcodecs.Zstd(level=3),
        "none": None,
    }
    numcodecs.blosc.set_nthreads(1)
    for name, codec in codecs.items():
        start = time.perf_counter()
        for _ in range(20):
            data = codec.encode(block) if codec is not None else block.tobytes()
        encode_ms = (time.perf_counter() - start) / 20 * 1e3
        start = time.perf_counter()
        for _ in range(20):
            _ = codec.decode(data) if codec is not None else data
        decode_ms = (time.perf_counter() - start) / 20 * 1e3
        print(
            f"  codec {name:>20}: ratio {block.nbytes / len(data):.2f}, encode {encode_ms:.2f} ms, "
            f"decode {decode_ms:.2f} ms per {block.nbytes / 1e6:.1f} MB chunk"
        )
    from repro.data.era5.chunks import chunk_array

    blosc3 = zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")
    blosc2 = codecs["blosc-lz4-shuffle"]
    n = 40
    for fmt, comp in ((2, blosc2), (3, blosc3)):
        path = work / f"route{fmt}.zarr"
        array = zarr.create_array(
            path,
            shape=(n * CHUNK_TIME, *block.shape[1:]),
            chunks=block.shape,
            dtype="f4",
            compressors=comp,
            zarr_format=fmt,
        )
        start = time.perf_counter()
        for i in range(n):
            array[i * CHUNK_TIME : (i + 1) * CHUNK_TIME] = block
        os.sync()
        api_ms = (time.perf_counter() - start) / n * 1e3
        direct = chunk_array(path, "")
        start = time.perf_counter()
        for i in range(n):
            direct.write_chunk((i, 0, 0, 0), block)
        os.sync()
        direct_ms = (time.perf_counter() - start) / n * 1e3
        print(f"  format {fmt}: zarr-python write {api_ms:.2f} ms per chunk, direct chunk write {direct_ms:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=1.5)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/era5_bench"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--codecs", action="store_true", help="also measure codec and write-route alternatives")
    parser.add_argument("--child", choices=["raw", "naive", "ours"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    work = args.dir
    if args.child:
        child(args.child, work / "source.zarr", work / args.child, args.workers)
        return
    import dask
    import numcodecs
    import xarray as xr
    import zarr

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        src = work / "source.zarr"
        n_time = build_source(src, args.size_gb)
        from repro.data.era5.writer import store_bytes

        nbytes = store_bytes(src)
        print(
            f"zarr {zarr.__version__}, numcodecs {numcodecs.__version__}, xarray {xr.__version__}, "
            f"dask {dask.__version__}, numpy {np.__version__}; {os.cpu_count()} CPUs, {args.workers} workers; "
            f"source {nbytes / 1e6:.0f} MB on disk, {n_time} time steps"
        )
        results = {}
        for method in ("raw", "naive", "ours"):
            (work / method).mkdir()
            cold = drop_caches()
            load = os.getloadavg()
            cmd = [sys.executable, __file__, "--dir", str(work), "--workers", str(args.workers), "--child", method]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode:
                raise RuntimeError(f"{method} failed:\n{proc.stderr[-3000:]}")
            results[method] = json.loads(proc.stdout.strip().splitlines()[-1])
            result = results[method]
            print(
                f"{method:>6}: {result['seconds']:6.2f} s {nbytes / 1e6 / result['seconds']:7.1f} MB/s, "
                f"CPU {result['cpu_s']:6.2f} s, peak {result['peak_mb']:6.0f} MB, {'cold' if cold else 'WARM'} cache, "
                f"load before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
            )
            shutil.rmtree(work / method)
        ours = results["ours"]["seconds"]
        print(
            f"ours vs naive: {results['naive']['seconds'] / ours:.2f}x; "
            f"ours vs raw copy: {results['raw']['seconds'] / ours:.2f}x"
        )
        if args.codecs:
            codec_choice(src, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
