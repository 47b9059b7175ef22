"""Stage: radar echo sequences in the canonical fields layout (variable ``precip``, 0-255 VIL scale).

``source: simulator`` runs repro.data.fields.simulators.radar_echoes (log-normal rain with a power-law
spectrum advected by a smooth divergence-free flow with growing and decaying cells; the true motion is
stored as ``motion``); ``source: sevir`` reads SEVIR VIL HDF5 files and ``source: meteonet`` MeteoNet
reflectivity npz files, one list of files per split. The event thresholds are fixed once from the
training data (quantiles of the wet pixels) unless the config names them (SEVIR: 16, 74, 133, 160, 181, 219).
"""

from __future__ import annotations

import numpy as np

from repro.data.fields import readers, simulators
from repro.data.fields.store import SPLITS, make_dataset, write_fields
from repro.workflow.io import sha256, write_json


def simulate(cfg: dict, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sizes = {s: cfg[f"n_{s}"] for s in SPLITS}
    total = sum(sizes.values())
    vil, motion = simulators.radar_echoes(
        np.random.default_rng([seed, 11]),
        total,
        cfg["resolution"],
        cfg["frames_in"] + cfg["frames_out"],
        **cfg["simulator"],
    )
    split = np.concatenate([[s] * n for s, n in sizes.items()])
    return vil, motion, split


def read_real(cfg: dict) -> tuple[np.ndarray, np.ndarray]:
    length = cfg["frames_in"] + cfg["frames_out"]
    parts, labels = [], []
    for split in SPLITS:
        for path in cfg["files"][split]:
            if cfg["source"] == "sevir":
                seq = readers.sevir_vil(path, length=length, stride=cfg["stride"], downsample=cfg["downsample"])
            else:
                seq = readers.meteonet_npz(path, length=length, stride=cfg["stride"], dbz_max=cfg["dbz_max"])
            parts.append(seq)
            labels += [split] * len(seq)
    return np.concatenate(parts), np.array(labels)


def main(job) -> None:
    settings = job.params.settings
    cfg, seed = settings["radar"], int(settings["data_seed"])
    extra = {}
    if cfg["source"] == "simulator":
        vil, motion, split = simulate(cfg, seed)
        extra = {"motion": (("sample", "component", "y", "x"), motion)}
        source = "simulator radar_echoes"
    else:
        vil, split = read_real(cfg)
        source = f"{cfg['source']} files {cfg['files']}"
    wet = vil[split == "train"]
    wet = wet[wet > 0]
    thresholds = cfg.get("thresholds") or [float(np.quantile(wet, q)) for q in cfg["threshold_quantiles"]]
    attrs = {
        "dx": cfg["pixel_km"],
        "dy": cfg["pixel_km"],
        "dt": cfg["dt_min"],
        "periodic": cfg["source"] == "simulator",
        "source": source,
        "frames_in": cfg["frames_in"],
        "thresholds": ",".join(f"{t:.6g}" for t in thresholds),
    }
    ds = make_dataset({"precip": vil}, split, attrs, extra=extra)
    write_fields(job.output.radar, ds)
    write_json(
        job.output.manifest,
        {
            "generator": "repro.papers.pdrf.data",
            "seed": seed,
            "settings": settings,
            "thresholds": thresholds,
            "files": {"radar.zarr": {"sha256": sha256(job.output.radar), "source": source}},
        },
    )
