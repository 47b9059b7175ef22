"""Peak memory of each streaming reader against the size of its data: flat, or growing?

    python benchmarks/streaming_memory.py                  # every reader at 1x, 2x, 4x and 8x its base size
    python benchmarks/streaming_memory.py sevir the-well   # these readers only (names: see READERS)
    python benchmarks/streaming_memory.py --scales 1 4     # other sizes

Issue 30 asks that a stage whose paper-scale data does not fit in memory stream it (SEVIR per event, VERDE per
chunk, cod-lite crops from a chunked store, protein-tokens evaluation in batches on the device, The Well per
file) and that its peak memory stay flat in the data size. For each reader this writes the data set's
published-layout fixture (the writers in ``repro.fixtures`` the rehearsal uses, given more events, lines,
crops, windows or files) at sizes growing geometrically, runs the reader or stage function in a fresh
subprocess per size, and records the data's size in bytes (decoded: what holding it whole would take; the
files' bytes on disk beside it) and the process's memory:

- ``maxrss_mb``: ``getrusage(RUSAGE_SELF).ru_maxrss`` in the child (the number the stages' logs print);
- ``anon_mb``: the peak of the child's anonymous resident memory (``RssAnon`` of ``/proc/<pid>/status``, sampled
  every 2 ms by the parent, so a spike shorter than that can be missed). Resident memory also counts the file
  pages of memory maps and of files read, which the kernel drops or writes back under a job's memory limit;
  anonymous memory is what the process cannot give back, what a cgroup's limit kills it for.

Each row fits peak MB against data MB by least squares (``slope``, MB of peak per MB of data) and says whether
memory is flat. **Flat**, decided before any number was seen: over the measured growth of the data, the peak
anonymous memory's slope is under ``FLAT_SLOPE`` = 0.05 *and* its largest-minus-smallest growth is under
``FLAT_GROWTH`` = 10 % of the data's growth. Why these: a reader that holds its data holds it at least once
(slope >= 1, two to four with decoding to float); one that streams keeps only per-item records (an id, a
per-window number: tens of bytes per kilobytes of data, slope ~0.01); 0.05 lies far from both. The growth test
guards the fit against a single outlier, and at these sizes 10 % of the data's growth (tens of MB) is above
the allocator's jitter between runs. A row whose resident memory (``maxrss``) grows while its anonymous memory
is flat says so (``file_pages``): the growth is mapped file pages (a memory-mapped output, HDF5 reads through
the page cache), reclaimable, not held.

For contrast each reader also runs a non-streaming read of the same files (``whole``: the whole file read, or
the same code with its batching turned off), which must come out growing; if it does not, the measurement
cannot tell the two apart and the row says so. Writes ``benchmarks/results/streaming_memory.json`` (readers
measured earlier keep their rows) with the host's load before and after and the library versions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

OUT = REPO / "benchmarks/results/streaming_memory.json"
SCALES = (1, 2, 4, 8)
FLAT_SLOPE = 0.05  # MB of peak anonymous memory per MB of data
FLAT_GROWTH = 0.10  # largest-minus-smallest peak, as a share of the data's growth
SAMPLE_S = 0.002
MB = 2**20


def paper_settings(slug: str) -> dict:
    """The paper's config section at rehearsal scale (config.yaml, then full.yaml, then rehearsal.yaml)."""
    from repro.workflow.config import load_config

    return load_config(REPO / "config/full.yaml", REPO / "config/rehearsal.yaml")["papers"][slug]


def bytes_of(paths) -> int:
    """Bytes of the files and of the files below the folders in ``paths``."""
    files = [q for p in map(Path, paths) for q in ([p] if p.is_file() else p.rglob("*")) if q.is_file()]
    return int(sum(f.stat().st_size for f in files))


# --- SEVIR per event: pdrf's data stage on the SEVIR fixture with more events per file -------------------------


def sevir_base_repeat() -> int:
    """Copies of the fixture's events at scale 1: enough sequences to fill pdrf's write buffer (``FLUSH_SAMPLES``)
    once, so every measured size holds a full buffer and what grows between sizes is what the stage keeps per
    event. Below that, the buffer filling up reads as growth: at 1 and 4 copies (40 and 160 sequences) a loaded
    CI host sampled 11 MB more peak over 165 MB more data, a slope of 0.068."""
    from repro.fixtures import sevir
    from repro.papers.pdrf.data import FLUSH_SAMPLES, window_starts

    radar = paper_settings("pdrf")["radar"]
    windows = len(window_starts(sevir.FRAMES, radar["frames_in"] + radar["frames_out"], radar["stride"]))
    per_copy = sum(len(events) for events in sevir.FILES.values()) * windows
    return FLUSH_SAMPLES // per_copy + 1


def sevir_prepare(root: Path, scale: int) -> dict:
    from repro.fixtures import sevir

    files = sevir.write(root, repeat=scale * sevir_base_repeat())
    vil = [str(p) for p in files if p.suffix == ".h5"]
    return {"root": str(root), "catalog": str(files[0]), "files": vil, "bytes": bytes_of(vil), "disk": bytes_of(vil)}


def sevir_stream(spec: dict) -> None:
    import types

    from repro.papers.pdrf import data

    settings = {k: v for k, v in paper_settings("pdrf").items() if k in ("data_seed", "radar", "motion")}
    settings["radar"]["sevir"] |= {"catalog": spec["catalog"], "files": spec["files"]}
    out = types.SimpleNamespace(radar=f"{spec['root']}/radar.zarr", manifest=f"{spec['root']}/manifest.json")
    data.main(types.SimpleNamespace(input=None, output=out, params=types.SimpleNamespace(settings=settings)))


def h5_whole(spec: dict) -> None:
    """Every dataset of every file read whole and kept: the non-streaming read."""
    import h5py

    held = []
    for path in spec["files"]:
        with h5py.File(path, "r") as f:
            f.visititems(lambda _, node: held.append(node[...]) if isinstance(node, h5py.Dataset) else None)
    assert held


# --- VERDE per chunk: lwe's reader of train.prefix with more lines ---------------------------------------------

VERDE_LINES = 16384


def verde_prepare(root: Path, scale: int) -> dict:
    from repro.fixtures import verde

    verde.write(root, rows=VERDE_LINES * scale)
    folder = root / verde.FOLDER
    size = bytes_of([folder / "train.prefix"])
    return {"folder": str(folder), "scratch": str(root / "scratch"), "bytes": size, "disk": size}


def verde_stream(spec: dict) -> None:
    from repro.papers.lwe.reader import read_verde

    arrays, _ = read_verde(spec["folder"], spec["scratch"])
    assert len(arrays["R_A"])


def verde_whole(spec: dict) -> None:
    """train.prefix read whole and parsed at once into one integer array."""
    text = (Path(spec["folder"]) / "train.prefix").read_text().replace(";", " ")
    assert np.fromstring(text, dtype=np.int64, sep=" ").size


# --- cod-lite crops from the chunked store: the training reader over crops.zarr with more crops ----------------

COD_CROPS, COD_CHUNK = 128, 16  # 1x = two groups of group_chunks chunks: the reader holds at most two


def cod_prepare(root: Path, scale: int) -> dict:
    """CLIC fixture images -> crops.zarr with the data stage's own crop writer (full-scale crop side)."""
    from repro.fixtures import clic
    from repro.papers.cod_lite.data import CropWriter, load_rgb, random_crops, resize_short

    images = clic.write(root / "clic")
    cfg = paper_settings("cod-lite")
    crop, short, count = 256, 256, COD_CROPS * scale
    rng = np.random.default_rng(0)
    writer = CropWriter(root / "crops.zarr", count, crop, COD_CHUNK)
    per = np.full(len(images), count // len(images))
    per[: count % len(images)] += 1
    for path, n in zip(images, per):
        img = resize_short(load_rgb(path), short)
        for start in range(0, int(n), COD_CHUNK):
            writer.add(random_crops(img, min(COD_CHUNK, int(n) - start), crop, rng))
    writer.close()
    return {
        "store": str(root / "crops.zarr"),
        "batch": cfg["train"]["batch"],
        "group_chunks": cfg["train"]["group_chunks"],
        "bytes": count * crop * crop * 3,
        "disk": bytes_of([root / "crops.zarr"]),
    }


def cod_stream(spec: dict) -> None:
    from repro.papers.cod_lite.train import CropStore

    store = CropStore(spec["store"])
    seen = sum(len(b) for (b,) in store.batches(spec["batch"], 0, spec["group_chunks"], "cpu")(0))
    assert seen == len(store)


def cod_whole(spec: dict) -> None:
    from repro.workflow.stores import open_zarr_group

    assert np.asarray(open_zarr_group(spec["store"])["crops"][:]).size


# --- protein-tokens evaluation in batches on the device: train.stream over more windows -----------------------

PT_WINDOWS = 2048


def pt_prepare(root: Path, scale: int) -> dict:
    """Windows in the data stage's array layout (C-alpha chains as random walks of 3.8 A steps), a quarter
    held out."""
    from repro.papers.protein_tokens.arrays import write_arrays

    settings = paper_settings("protein-tokens")
    n, width = PT_WINDOWS * scale, settings["windows"]["window"]
    rng = np.random.default_rng(scale)
    steps = rng.normal(size=(n, width, 3))
    ca = np.cumsum(3.8 * steps / np.linalg.norm(steps, axis=-1, keepdims=True), axis=1)
    backbone = (ca[:, :, None] + rng.normal(scale=1.2, size=(n, width, 3, 3))).astype(np.float32)
    backbone[:, :, 1] = ca
    write_arrays(
        root / "windows",
        {
            "backbone": backbone,
            "mask": np.ones((n, width), np.float32),
            "dssp": np.full((n, width), 2, np.uint8),
            "split": (np.arange(n) % 4 == 3).astype(np.int8),
            "chain": np.arange(n, dtype=np.int32),
            "group": np.arange(n, dtype=np.int32) // 4,
            "label": np.zeros(n, np.int8),
        },
    )
    size = bytes_of([root / "windows"])
    return {"root": str(root), "bytes": size, "disk": size}


def _pt_run(spec: dict, batch: int | None) -> None:
    import torch

    from repro.papers.protein_tokens import train
    from repro.papers.protein_tokens.arrays import ArrayWriter, open_arrays

    torch.set_num_threads(1)  # the stage's declared threads
    settings = pt_settings()
    windows = open_arrays(Path(spec["root"]) / "windows")
    held = np.flatnonzero(np.asarray(windows["split"]) > 0)
    torch.manual_seed(0)
    model = train.build("apt", settings, windows["backbone"].shape[1]).eval()
    writer = ArrayWriter(Path(spec["root"]) / "outputs")
    train.stream(model, windows, held, batch or len(windows["split"]), writer, 0, "apt", settings)
    writer.close()


def pt_settings() -> dict:
    """The rehearsal's settings with the embedded default's regression decoder: the flow decoder's steps cost
    CPU time in proportion, not memory, and the batching under test is the same."""
    settings = paper_settings("protein-tokens")
    settings["model"]["decoder"] = "regression"
    return settings


def pt_stream(spec: dict) -> None:
    _pt_run(spec, pt_settings()["inference"]["batch"])


def pt_whole(spec: dict) -> None:
    """The same inference as one batch of every window (what evaluation did before it was batched)."""
    _pt_run(spec, None)


# --- The Well per file: flower's data stage on more shear_flow train files ------------------------------------


def well_prepare(root: Path, scale: int) -> dict:
    from repro.fixtures import the_well

    shape = the_well.Shape(traj=4, time=32, nx=128, ny=128)
    rng = np.random.default_rng(2412)
    files = {}
    for split, count in (("train", scale), ("test", 1)):
        folder = root / "shear_flow" / "data" / split
        folder.mkdir(parents=True, exist_ok=True)
        files[split] = [str(folder / f"shear_flow_Reynolds_1e4_Schmidt_{k + 1}e0.hdf5") for k in range(count)]
        for path in files[split]:
            the_well.shear_flow(Path(path), rng, shape)
    every = files["train"] + files["test"]
    return {"root": str(root), "train": files["train"], "test": files["test"], "files": every,
            "n_train": shape.traj * scale, "bytes": bytes_of(every), "disk": bytes_of(every)}  # fmt: skip


def well_stream(spec: dict) -> None:
    from repro.papers.flower.data import the_well_task

    cfg = paper_settings("flower")["tasks"]["advection"] | {
        "train_files": spec["train"],
        "test_files": spec["test"],
        "n_train": spec["n_train"],
        "n_test": 4,
    }
    the_well_task(f"{spec['root']}/advection.zarr", cfg)


@dataclass(frozen=True)
class Reader:
    what: str
    prepare: Callable[[Path, int], dict]
    stream: Callable[[dict], None]
    whole: Callable[[dict], None]
    imports: tuple[str, ...]


READERS = {
    "sevir": Reader(
        "pdrf data stage, SEVIR VIL one event at a time (events x scale; scale 1 fills its write buffer)",
        sevir_prepare, sevir_stream, h5_whole, ("repro.papers.pdrf.data", "h5py"),
    ),
    "verde": Reader(
        "lwe reader of VERDE's train.prefix, one chunk of lines at a time (lines x scale)",
        verde_prepare, verde_stream, verde_whole, ("repro.papers.lwe.reader", "repro.papers.lwe.lwe"),
    ),
    "cod-lite": Reader(
        "cod-lite training reader, crops.zarr a group of chunks at a time (crops x scale)",
        cod_prepare, cod_stream, cod_whole, ("repro.papers.cod_lite.train", "zarr"),
    ),
    "protein-tokens": Reader(
        "protein-tokens inference (train.stream), batches of inference.batch windows (windows x scale)",
        pt_prepare, pt_stream, pt_whole, ("repro.papers.protein_tokens.train",),
    ),
    "the-well": Reader(
        "flower data stage, The Well shear_flow one trajectory at a time (train files x scale)",
        well_prepare, well_stream, h5_whole, ("repro.papers.flower.data", "h5py"),
    ),
}  # fmt: skip


def _status_kb(pid: int, key: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def run_child(name: str, mode: str, spec: dict) -> dict:
    """Run ``mode`` ("stream" or "whole") of reader ``name`` in a fresh interpreter; sample its anonymous
    memory from here; return its ru_maxrss, its resident memory after imports, the peak anonymous memory."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
    env = os.environ | {"PYTHONPATH": str(REPO / "scripts")}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, mode, fh.name]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    anon = 0
    while proc.poll() is None:
        anon = max(anon, _status_kb(proc.pid, "RssAnon:") or 0)
        time.sleep(SAMPLE_S)
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    os.unlink(fh.name)
    if proc.returncode:
        raise RuntimeError(f"{name} {mode} failed ({proc.returncode}):\n{err[-3000:]}")
    child = json.loads(out.strip().splitlines()[-1])
    return child | {"anon_mb": round(anon / 1024, 1), "seconds": round(seconds, 2)}


def child_main(name: str, mode: str, spec_path: str) -> None:
    """In the child: import what the reader needs (the baseline), run it, print the usage as JSON."""
    import importlib
    import logging
    import resource

    logging.disable(logging.WARNING)
    reader = READERS[name]
    for module in reader.imports:
        importlib.import_module(module)
    baseline = _status_kb(os.getpid(), "VmRSS:") or 0
    anon_base = _status_kb(os.getpid(), "RssAnon:") or 0
    getattr(reader, mode)(json.loads(Path(spec_path).read_text()))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"maxrss_mb": round(usage.ru_maxrss / 1024, 1), "baseline_mb": round(baseline / 1024, 1),
                      "anon_baseline_mb": round(anon_base / 1024, 1)}))  # fmt: skip


def measure(name: str, scales=SCALES, modes=("stream", "whole"), workdir: Path | None = None) -> dict:
    """Per mode, one point per scale: data bytes (decoded, on disk) and the child's memory. Each size's files
    are written, measured and deleted before the next."""
    import shutil

    if len(scales) < 2 or list(scales) != sorted(set(scales)):
        raise ValueError(f"need two or more increasing scales, got {scales}")
    reader = READERS[name]
    points: dict[str, list[dict]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for scale in scales:
            root = Path(tmp) / f"x{scale}"
            root.mkdir()
            spec = reader.prepare(root, scale)
            for mode in modes:
                usage = run_child(name, mode, spec)
                points[mode].append({"scale": scale, "data_mb": round(spec["bytes"] / MB, 2),
                                     "disk_mb": round(spec["disk"] / MB, 2)} | usage)  # fmt: skip
            shutil.rmtree(root)
    return {"what": reader.what, "points": points, "fit": {m: verdict(p) for m, p in points.items()}}


def slope(x: list[float], y: list[float]) -> float:
    """Least-squares slope of y against x."""
    return float(np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)[0])


def verdict(points: list[dict]) -> dict:
    """Slopes (MB per MB of data) of the anonymous and resident peaks, growth against the data's, flat or not."""
    data = [p["data_mb"] for p in points]
    anon, rss = [p["anon_mb"] for p in points], [p["maxrss_mb"] for p in points]
    grown = data[-1] - data[0]
    anon_slope, rss_slope = slope(data, anon), slope(data, rss)
    growth = (anon[-1] - anon[0]) / grown
    flat = bool(anon_slope < FLAT_SLOPE and growth < FLAT_GROWTH)
    rss_flat = bool(rss_slope < FLAT_SLOPE and (rss[-1] - rss[0]) / grown < FLAT_GROWTH)
    return {
        "anon_slope": round(anon_slope, 4),
        "rss_slope": round(rss_slope, 4),
        "anon_growth_share": round(growth, 4),
        "flat": flat,
        "file_pages": bool(flat and not rss_flat),
    }


def table(results: dict) -> str:
    lines = [
        f"{'reader':15s} {'mode':6s} {'data MB':>26s} {'peak anon MB':>28s} {'maxrss MB':>28s} "
        f"{'slope anon':>10s} {'slope rss':>9s} verdict"
    ]
    for name, r in results.items():
        for mode, pts in r["points"].items():
            fit = r["fit"][mode]
            verdict_text = "flat" if fit["flat"] else "GROWS"
            if fit["file_pages"]:
                verdict_text += " (rss grows: file pages)"
            if mode == "whole" and fit["flat"]:
                verdict_text += " (contrast not detected)"
            series = [" ".join(f"{p[key]:.0f}" for p in pts) for key in ("data_mb", "anon_mb", "maxrss_mb")]
            lines.append(
                f"{name:15s} {mode:6s} {series[0]:>26s} {series[1]:>28s} {series[2]:>28s} "
                f"{fit['anon_slope']:10.3f} {fit['rss_slope']:9.3f} {verdict_text}"
            )
    return "\n".join(lines)


def versions() -> dict:
    import importlib.metadata as md

    out = {"python": sys.version.split()[0]}
    for package in ("numpy", "h5py", "zarr", "torch", "pandas"):
        try:
            out[package] = md.version(package)
        except md.PackageNotFoundError:
            out[package] = None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readers", nargs="*", metavar="reader", help=f"any of {', '.join(READERS)} (default: all)")
    parser.add_argument("--scales", nargs="+", type=int, default=list(SCALES))
    parser.add_argument("--child", nargs=3, metavar=("READER", "MODE", "SPEC"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(*args.child)
        return
    names = args.readers or list(READERS)
    unknown = [n for n in names if n not in READERS]
    if unknown:
        parser.error(f"unknown readers {unknown}; choose from {list(READERS)}")
    load_before = os.getloadavg()
    print(f"{os.cpu_count()} CPUs, load {load_before}, {versions()}")
    results = {}
    for name in names:
        start = time.perf_counter()
        results[name] = measure(name, args.scales) | {"seconds": round(time.perf_counter() - start, 1)}
        print("\n".join(table({name: results[name]}).splitlines()[1:]), flush=True)
    load_after = os.getloadavg()
    print()
    print(table(results))
    print(f"flat: anonymous-peak slope < {FLAT_SLOPE} MB/MB and growth < {FLAT_GROWTH:.0%} of the data's growth")
    print(f"load before {load_before}, after {load_after}")
    previous = json.loads(OUT.read_text()) if OUT.is_file() else {}
    record = {
        "flat_slope": FLAT_SLOPE,
        "flat_growth": FLAT_GROWTH,
        "readers": previous.get("readers", {})
        | {n: r | {"load_before": load_before, "load_after": load_after} for n, r in results.items()},
        "host": {"cpus": os.cpu_count(), "versions": versions()},
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
