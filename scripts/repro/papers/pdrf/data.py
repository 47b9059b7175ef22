"""Stage: radar echo sequences in the canonical fields layout (variable ``precip``, 0-255 VIL scale), streamed.

Sources (``radar.source``):
- ``simulator``: repro.data.fields.simulators.radar_echoes (log-normal rain with a power-law spectrum advected by
  a smooth divergence-free flow with growing and decaying cells; the true motion is stored as ``motion``);
- ``sevir``: SEVIR VIL events chosen from CATALOG.csv by time window per split (and event type), read one event
  at a time (repro.data.fields.sevir); the missing-data code 255 is NaN before the 3x3 block average; each
  event gives windows of ``frames_in + frames_out`` frames every ``stride`` frames;
- ``meteonet``: MeteoNet reflectivity npz files, one list per split, one file at a time.

Besides ``precip`` (NaN where the radar had no data), every sequence gets its Lucas-Kanade motion estimated from
its past frames (``motion_est``) and the coarse scale of its semi-Lagrangian extrapolation (``sl_lowpass``, the
soft teacher's target), so training reads its teacher from the store, batch by batch. Samples are written
block by block (repro.data.fields.store.FieldsWriter): memory stays flat in the number of events. The event
thresholds are the config's (SEVIR: 16, 74, 133, 160, 181, 219) or quantiles of the wet training pixels from a
histogram accumulated while streaming. The manifest records each input file's size and sha256, the events
selected, used and refused (the first ten ids), and the missing pixels.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from repro.data.fields import readers, sevir, simulators
from repro.data.fields.store import SPLITS, FieldsWriter
from repro.papers.pdrf.nowcast import TEACHER_POOL, lowpass, motions, sl_from_motion
from repro.workflow.io import InputError
from repro.workflow.manifest import file_record, write_manifest

log = logging.getLogger(__name__)
HIST_BINS = np.linspace(0.0, 255.0, 1021)
FLUSH_SAMPLES = 64  # sequences buffered before a write: memory stays bounded, writes stay few


def window_starts(frames: int, length: int, stride: int) -> list[int]:
    return list(range(0, frames - length + 1, stride))


class Histogram:
    """Counts of wet (> 0, finite) training values, for quantile thresholds without holding the data."""

    def __init__(self) -> None:
        self.counts = np.zeros(len(HIST_BINS) - 1, dtype=np.int64)

    def add(self, values: np.ndarray) -> None:
        wet = values[np.isfinite(values) & (values > 0)]
        self.counts += np.histogram(wet, bins=HIST_BINS)[0]

    def quantiles(self, qs: list[float]) -> list[float]:
        if self.counts.sum() == 0:
            raise ValueError("no wet training pixels to set the thresholds from")
        cdf = np.cumsum(self.counts) / self.counts.sum()
        return [float(HIST_BINS[1:][np.searchsorted(cdf, q)]) for q in qs]


def simulated_events(cfg: dict, seed: int) -> tuple[dict[str, int], Iterator[tuple[str, str, np.ndarray]], dict]:
    """(events per split, iterator of (split, id, sequence (time, y, x)), extra info) of the simulator."""
    sizes = {s: cfg[f"n_{s}"] for s in SPLITS}
    vil, motion = simulators.radar_echoes(
        np.random.default_rng([seed, 11]),
        sum(sizes.values()),
        cfg["resolution"],
        cfg["frames_in"] + cfg["frames_out"],
        **cfg["simulator"],
    )
    labels = [s for s, n in sizes.items() for _ in range(n)]

    def events():
        for i, split in enumerate(labels):
            yield split, f"sim{i:05d}", vil[i]

    return sizes, events(), {"motion": motion}


def sevir_events(cfg: dict, summary: dict) -> tuple[dict[str, int], Iterator[tuple[str, str, np.ndarray]], list[str]]:
    """Catalog selection, all files checked first (test first), then one event at a time."""
    sv = cfg["sevir"]
    catalog = sevir.read_catalog(sv["catalog"])
    chosen = sevir.select(
        catalog, sv["files"], sv["windows"], event_types=sv.get("event_types"), catalog_path=sv["catalog"]
    )
    ids = sevir.check_files(chosen)
    summary["selected"] = {s: int(len(e)) for s, e in chosen.items()}
    summary["refused"] = []
    summary["missing_pixels"] = 0
    summary["pixels"] = 0

    def events():
        for split in SPLITS:
            for event_id, frames, missing, why in sevir.read_events(
                chosen[split], ids, downsample=cfg["downsample"], max_missing=sv["max_missing"]
            ):
                summary["pixels"] += 49 * (cfg["downsample"] * cfg["resolution"]) ** 2
                summary["missing_pixels"] += missing
                if frames is None:
                    summary["refused"].append((event_id, why))
                    continue
                yield split, event_id, frames

    counts = {s: int(len(chosen.get(s, ()))) for s in SPLITS}
    return counts, events(), sorted(set(ids))


def meteonet_events(cfg: dict, length: int) -> tuple[dict[str, int], Iterator[tuple[str, str, np.ndarray]], list[str]]:
    """(windows per split, iterator of (split, file stem, frames), files) of MeteoNet npz files, test first checked."""
    files = cfg["meteonet"]["files"]
    windows = {s: 0 for s in SPLITS}
    for split in ("test", "val", "train"):
        for path in files.get(split, []):
            if not Path(path).is_file():
                raise InputError(path, f"missing (a MeteoNet file the {split} split needs)")
            windows[split] += len(window_starts(readers.meteonet_shape(path)[0], length, cfg["stride"]))

    def events():
        for split in SPLITS:
            for path in files.get(split, []):
                yield split, Path(path).stem, readers.meteonet_frames(path, cfg["meteonet"]["dbz_max"])

    return windows, events(), [p for s in SPLITS for p in files.get(s, [])]


def main(job) -> None:
    settings = job.params.settings
    cfg, seed, motion_cfg = settings["radar"], int(settings["data_seed"]), settings["motion"]
    fin, fout = cfg["frames_in"], cfg["frames_out"]
    length = fin + fout
    n = cfg["resolution"]
    summary: dict = {}
    extra, inputs = {}, []
    if cfg["source"] == "simulator":
        counts, events, extra = simulated_events(cfg, seed)
        starts, periodic, source = [0], True, "simulator radar_echoes"
        n_samples = dict(counts)
    else:
        periodic, source = False, f"{cfg['source']} files"
        if cfg["source"] == "sevir":
            counts, events, inputs = sevir_events(cfg, summary)
            inputs = [cfg["sevir"]["catalog"], *inputs]
            starts = window_starts(sevir.FRAMES, length, cfg["stride"])
            n_samples = {s: c * len(starts) for s, c in counts.items()}
        else:
            n_samples, events, inputs = meteonet_events(cfg, length)
            counts = {s: len(cfg["meteonet"]["files"].get(s, [])) for s in SPLITS}
            starts = None
    capacity = sum(n_samples.values())
    variables = {
        "precip": (("sample", "time", "y", "x"), (capacity, length, n, n)),
        "motion_est": (("sample", "component", "y", "x"), (capacity, 2, n, n)),
        "sl_lowpass": (("sample", "lead", "yc", "xc"), (capacity, fout, n // TEACHER_POOL, n // TEACHER_POOL)),
    }
    if "motion" in extra:
        variables["motion"] = (("sample", "component", "y", "x"), (capacity, 2, n, n))
    attrs = {
        "dx": cfg["pixel_km"],
        "dy": cfg["pixel_km"],
        "dt": cfg["dt_min"],
        "periodic": periodic,
        "source": source,
        "frames_in": fin,
    }
    hist, cursor, labels, events_of = Histogram(), 0, [], []
    used = {s: 0 for s in SPLITS}
    buffer: dict[str, list[np.ndarray]] = {name: [] for name in variables}
    with FieldsWriter(job.output.radar, variables, attrs) as writer:

        def flush() -> None:
            nonlocal cursor
            if buffer["precip"]:
                block = {name: np.concatenate(parts) for name, parts in buffer.items()}
                for name, values in block.items():
                    writer.write(name, cursor, values)
                cursor += len(block["precip"])
                for parts in buffer.values():
                    parts.clear()

        for split_name, event_id, sequence in events:  # split by split, in SPLITS order
            if sequence.shape[-2:] != (n, n):
                raise InputError(event_id, f"frames are {sequence.shape[-2:]}, the config's resolution is {n}")
            seq = np.stack(
                [sequence[s : s + length] for s in (starts or window_starts(len(sequence), length, cfg["stride"]))]
            )
            past = seq[:, :fin]
            motion = motions(past, motion_cfg["window"], motion_cfg["ridge"], periodic)
            buffer["precip"].append(seq)
            buffer["motion_est"].append(motion)
            buffer["sl_lowpass"].append(lowpass(sl_from_motion(past, motion, fout, periodic)))
            if "motion" in extra:
                buffer["motion"].append(extra["motion"][int(event_id[3:])][None])
            if split_name == "train":
                hist.add(seq)
            labels += [split_name] * len(seq)
            events_of += [event_id] * len(seq)
            used[split_name] += 1
            if sum(len(b) for b in buffer["precip"]) >= FLUSH_SAMPLES:
                flush()
        flush()
        thresholds = cfg.get("thresholds") or hist.quantiles(cfg["threshold_quantiles"])
        writer.finish(
            np.array(labels),
            coords={"event": np.array(events_of, dtype=object)},
            attrs={"thresholds": ",".join(f"{t:.6g}" for t in thresholds)},
        )
    refused = summary.get("refused", [])
    selected = sum(summary.get("selected", counts).values())
    if refused:
        log.warning("refused %d of %d selected events: %s", len(refused), selected, [i for i, _ in refused[:10]])
    limit = cfg.get("sevir", {}).get("max_refused_fraction", 0.0)
    if selected and len(refused) > limit * selected:
        raise InputError(
            cfg["sevir"]["catalog"],
            f"{len(refused)} of {selected} selected events refused (max_refused_fraction {limit}); "
            f"first ids {[i for i, _ in refused[:10]]}: {sorted({w for _, w in refused})}",
        )
    write_manifest(
        job.output.manifest,
        source="embedded" if cfg["source"] == "simulator" else "local",
        producer="repro.papers.pdrf.data",
        files=[file_record(p, role="input") for p in inputs] + [file_record(job.output.radar, role="output")],
        licence="generated" if cfg["source"] == "simulator" else cfg.get("licence", "see the data set's terms"),
        settings=settings,
        details={
            "thresholds": thresholds,
            "samples": {s: labels.count(s) for s in SPLITS},
            "events": {
                "used": used,
                "selected": summary.get("selected", counts),
                "refused": len(refused),
                "refused_first_ids": [i for i, _ in refused[:10]],
                "refused_reasons": sorted({w for _, w in refused}),
            },
            "missing_pixels": summary.get("missing_pixels", 0),
            "pixels_read": summary.get("pixels", 0),
        },
    )
