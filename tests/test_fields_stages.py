"""The papers' data stages end in the canonical layout from real-layout files (SEVIR for PDRF)."""

import types

import h5py
import numpy as np
import pytest

from repro.data.fields.store import open_fields
from repro.papers.pdrf import data as pdrf_data
from repro.workflow.io import InputError


def job(tmp_path, radar):
    settings = {"data_seed": 0, "radar": radar}
    ns = types.SimpleNamespace
    return ns(
        input=ns(),
        output=ns(radar=str(tmp_path / "radar.zarr"), manifest=str(tmp_path / "manifest.json")),
        params=ns(settings=settings, scale="full"),
    )


def sevir_file(path, events):
    with h5py.File(path, "w") as f:
        f["vil"] = np.random.default_rng(events).integers(0, 255, size=(events, 12, 12, 49), dtype=np.uint8)


def test_pdrf_data_stage_reads_sevir_into_the_canonical_store(tmp_path):
    for name, events in (("train", 2), ("val", 1), ("test", 1)):
        sevir_file(tmp_path / f"{name}.h5", events)
    radar = {
        "source": "sevir",
        "files": {s: [str(tmp_path / f"{s}.h5")] for s in ("train", "val", "test")},
        "stride": 12,
        "downsample": 3,
        "frames_in": 5,
        "frames_out": 20,
        "dt_min": 5,
        "pixel_km": 3.0,
        "thresholds": [16, 74, 133, 160, 181, 219],
    }
    pdrf_data.main(job(tmp_path, radar))
    ds = open_fields(tmp_path / "radar.zarr", ("precip",))
    assert ds.precip.shape == (4 * 3, 25, 4, 4)
    assert list(ds.split.values).count("train") == 6 and ds.attrs["thresholds"].startswith("16,74")


def test_pdrf_data_stage_names_a_bad_sevir_file(tmp_path):
    with h5py.File(tmp_path / "bad.h5", "w") as f:
        f["vil"] = np.zeros((1, 12, 12, 10), np.uint8)
    radar = {
        "source": "sevir",
        "files": {"train": [str(tmp_path / "bad.h5")], "val": [], "test": []},
        "stride": 5,
        "downsample": 1,
        "frames_in": 5,
        "frames_out": 20,
        "dt_min": 5,
        "pixel_km": 1.0,
    }
    with pytest.raises(InputError, match="bad.h5"):
        pdrf_data.main(job(tmp_path, radar))
