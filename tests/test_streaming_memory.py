"""Streaming readers keep their memory flat in the data size, and the measurement would see one that did not.

Two checks, independent of each other: benchmarks/streaming_memory.py's own measurement (a fresh process per
size, peak anonymous memory sampled from outside, its least-squares verdict), for SEVIR per event; and, in this process, tracemalloc's exact peak of the bytes the reader allocates (numpy buffers and
Python objects), compared directly between two sizes. Each also runs a non-streaming read of the same files,
which must be seen growing: a check that could not tell the two apart would pass anything.
"""

from __future__ import annotations

import importlib.util
import sys
import tracemalloc
from pathlib import Path

import numpy as np

from repro.fixtures import the_well, verde
from repro.papers.flower.data import the_well_task
from repro.papers.lwe.reader import read_prefix

REPO = Path(__file__).resolve().parents[1]
MB = 2**20


def benchmark():
    spec = importlib.util.spec_from_file_location("streaming_memory", REPO / "benchmarks/streaming_memory.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_benchmark_finds_sevir_flat_and_the_whole_read_growing(tmp_path):
    """SEVIR only: at sizes a test affords, the others' data grows by tens of MB, and the sampled anonymous peak
    jitters by 1-8 MB between runs (VERDE's peak, one chunk's parse, lasts milliseconds), too close to the
    verdict's 5 %; they are held to the exact check below (The Well, VERDE) and to the benchmark's own run. SEVIR's
    scale 1 already fills pdrf's write buffer, so both sizes hold the same transients (sevir_base_repeat)."""
    name, bench = "sevir", benchmark()
    result = bench.measure(name, (1, 4), workdir=tmp_path)
    stream, whole = result["points"]["stream"], result["points"]["whole"]
    assert stream[-1]["data_mb"] > 3 * stream[0]["data_mb"] > 0
    assert result["fit"]["stream"]["flat"], bench.table({name: result})
    assert not result["fit"]["whole"]["flat"], bench.table({name: result})
    # the numbers behind the verdicts, without the fit: a whole read holds at least half its data
    grown = stream[-1]["data_mb"] - stream[0]["data_mb"]
    assert stream[-1]["anon_mb"] - stream[0]["anon_mb"] < 0.1 * grown
    assert whole[-1]["anon_mb"] - whole[0]["anon_mb"] > 0.5 * grown


def traced_peak(run) -> float:
    """Peak bytes allocated while ``run()`` runs, over what was allocated before (tracemalloc, exact)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        run()
        return (tracemalloc.get_traced_memory()[1] - before) / MB
    finally:
        tracemalloc.stop()


def well_files(root: Path, count: int) -> list[str]:
    shape = the_well.Shape(traj=4, time=16, nx=64, ny=64)  # 4 MB per file
    rng = np.random.default_rng(0)
    root.mkdir(parents=True)
    paths = [root / f"shear_flow_Reynolds_1e4_Schmidt_{k + 1}e0.hdf5" for k in range(count)]
    for path in paths:
        the_well.shear_flow(path, rng, shape)
    return [str(p) for p in paths]


def test_the_well_reader_allocates_the_same_peak_for_four_times_the_files(tmp_path):
    import h5py

    peaks, wholes, sizes = [], [], []
    for count in (1, 4):
        files = well_files(tmp_path / f"x{count}", count)
        sizes.append(sum(Path(f).stat().st_size for f in files) / MB)
        cfg = {"name": "shear_flow", "fields": ["tracer", "pressure", "velocity"], "train_files": files,
               "test_files": files[:1], "n_train": 4 * count, "n_test": 1}  # fmt: skip
        peaks.append(traced_peak(lambda: the_well_task(str(tmp_path / f"x{count}.zarr"), cfg)))

        def whole():
            held = []
            for path in files:
                with h5py.File(path) as f:
                    held += [f[g][n][...] for g in ("t0_fields", "t1_fields") for n in f[g]]

        wholes.append(traced_peak(whole))
    grown = sizes[1] - sizes[0]
    assert grown > 10
    assert peaks[1] - peaks[0] < 0.1 * grown, (sizes, peaks)
    assert wholes[1] - wholes[0] > 0.9 * grown, (sizes, wholes)


def test_verde_reader_allocates_the_same_peak_for_four_times_the_lines(tmp_path):
    peaks, wholes, sizes = [], [], []
    for rows in (512, 2048):
        verde.write(tmp_path / f"r{rows}", rows=rows)
        prefix = tmp_path / f"r{rows}" / verde.FOLDER / "train.prefix"
        sizes.append(prefix.stat().st_size / MB)
        k = len(verde.HAMMING)
        scratch = tmp_path / f"s{rows}"
        peaks.append(traced_peak(lambda: read_prefix(prefix, verde.N, k, verde.Q, scratch, chunk_lines=128)))
        # the same reader with one chunk for the whole file: what it did before chunking
        wholes.append(
            traced_peak(lambda: read_prefix(prefix, verde.N, k, verde.Q, tmp_path / f"w{rows}", chunk_lines=rows))
        )
    grown = sizes[1] - sizes[0]
    assert grown > 2
    assert peaks[1] - peaks[0] < 0.1 * grown, (sizes, peaks)
    assert wholes[1] - wholes[0] > 1.0 * grown, (sizes, wholes)
