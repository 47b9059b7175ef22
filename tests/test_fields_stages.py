"""The papers' data stages end in the canonical layout from files in the published layouts (the fixture writers):
SEVIR for PDRF (catalog selection, missing data, refused events, the manifest), The Well and PDEBench for Flower,
the FNO release and PDEBench NS for GPO."""

import json
import types

import numpy as np
import pandas as pd
import pytest

from repro.data.fields.store import open_fields, split_labels
from repro.fixtures import fno_mat, pdebench, sevir, the_well
from repro.papers.flower import data as flower_data
from repro.papers.gpo import data as gpo_data
from repro.papers.pdrf import data as pdrf_data
from repro.workflow.io import InputError

ns = types.SimpleNamespace
WINDOWS = {
    "train": ["2017-01-01", "2019-01-01"],
    "val": ["2019-01-01", "2019-10-01"],
    "test": ["2019-10-01", "2021-01-01"],
}


def radar(root, **extra):
    return {
        "source": "sevir",
        "resolution": 8,
        "downsample": 12,
        "frames_in": 5,
        "frames_out": 20,
        "stride": 12,
        "dt_min": 5,
        "pixel_km": 12.0,
        "thresholds": [16, 74, 133, 160, 181, 219],
        "sevir": {
            "catalog": str(root / "CATALOG.csv"),
            "files": sorted(str(p) for p in (root / "data").rglob("*.h5")),
            "windows": WINDOWS,
            "event_types": None,
            "max_missing": 0.5,
            "max_refused_fraction": 0.2,
        }
        | extra,
    }


def pdrf_job(tmp_path, radar_cfg):
    settings = {"data_seed": 0, "radar": radar_cfg, "motion": {"window": 3.0, "ridge": 0.01}}
    out = ns(radar=str(tmp_path / "radar.zarr"), manifest=str(tmp_path / "manifest.json"))
    return ns(input=ns(), output=out, params=ns(settings=settings, scale="full"))


@pytest.fixture(scope="module")
def sevir_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("sevir")
    sevir.write(root, size=96)
    return root


def test_pdrf_data_stage_reads_sevir_events_into_the_canonical_store(sevir_root, tmp_path):
    pdrf_data.main(pdrf_job(tmp_path, radar(sevir_root)))
    ds = open_fields(tmp_path / "radar.zarr", ("precip",), missing_ok=("precip",))
    # 8 events, 3 windows of 25 frames each (starts 0, 12 and 24 of 49)
    assert ds.precip.shape == (24, 25, 8, 8)
    labels = split_labels(ds)
    assert list(labels).count("train") == 12 and list(labels).count("test") == 6
    assert ds.attrs["thresholds"].startswith("16,74") and not ds.attrs["periodic"]
    assert np.nanmax(ds.precip.values) <= 254  # 255 is missing data, never an echo value
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    inputs = [f for f in manifest["files"] if f["role"] == "input"]
    assert len(inputs) == 5 and all(len(f["sha256"]) == 64 and f["bytes"] > 0 for f in inputs)
    assert manifest["details"]["missing_pixels"] > 0 and manifest["details"]["events"]["refused"] == 0
    assert ds.sl_lowpass.shape == (24, 20, 2, 2) and ds.motion_est.shape == (24, 2, 8, 8)


def test_refused_events_are_counted_named_and_bounded(sevir_root, tmp_path):
    catalog = pd.read_csv(sevir_root / "CATALOG.csv")
    bad = catalog.iloc[0].copy()
    bad["id"], bad["file_index"], bad["time_utc"] = "S0000099", 1, "2018-05-04 12:00:00"
    pd.concat([catalog, bad.to_frame().T]).to_csv(tmp_path / "CATALOG.csv", index=False)
    cfg = radar(sevir_root, catalog=str(tmp_path / "CATALOG.csv"))
    pdrf_data.main(pdrf_job(tmp_path, cfg))
    events = json.loads((tmp_path / "manifest.json").read_text())["details"]["events"]
    assert events["refused"] == 1 and events["refused_first_ids"] == ["S0000099"]
    assert open_fields(tmp_path / "radar.zarr", ("precip",), missing_ok=("precip",)).precip.shape[0] == 24
    strict = radar(sevir_root, catalog=str(tmp_path / "CATALOG.csv"), max_refused_fraction=0.0)
    with pytest.raises(InputError, match="1 of 9 selected events refused"):
        pdrf_data.main(pdrf_job(tmp_path / "strict", strict))


def flower_job(tmp_path, tasks):
    settings = {"data_seed": 0, "tasks": tasks}
    out = ns(
        **{n: str(tmp_path / f"{n}.zarr") for n in ("advection", "wave", "burgers")}, manifest=str(tmp_path / "m.json")
    )
    return ns(input=ns(package=None), output=out, params=ns(settings=settings, scale="full"))


def test_flower_data_stage_reads_the_well_and_pdebench(tmp_path):
    the_well.write(tmp_path / "well")
    pdebench.write(tmp_path / "pde")
    well = tmp_path / "well"

    def task(name, file, fields, statics=()):
        return {
            "source": "the_well",
            "name": name,
            "fields": fields,
            "static_fields": list(statics),
            "train_files": [str(well / name / "data/train" / file)],
            "test_files": [str(well / name / "data/test" / file)],
            "n_train": 2,
            "n_test": 1,
        }

    tasks = {
        "advection": task("shear_flow", "shear_flow_Reynolds_1e4_Schmidt_1e0.hdf5", ["tracer", "pressure", "velocity"]),
        "wave": task(
            "acoustic_scattering_maze",
            "acoustic_scattering_maze_chunk_0.hdf5",
            ["pressure", "velocity"],
            ["density", "speed_of_sound"],
        ),
        "burgers": {"source": "pdebench", "path": str(tmp_path / "pde" / pdebench.BURGERS), "n_train": 16, "n_test": 8},
    }
    flower_data.main(flower_job(tmp_path, tasks))
    adv = open_fields(tmp_path / "advection.zarr", ("state",))
    assert adv.state.shape == (3, the_well.TIME, 4, the_well.NY, the_well.NX)
    assert adv.attrs["dx"] == pytest.approx(2 / the_well.NX) and adv.attrs["velocity"] == "state:2,3"
    assert adv.attrs["periodic"] == 1
    wave = open_fields(tmp_path / "wave.zarr", ("state",))
    assert wave["static"].shape == (3, 2, the_well.NY, the_well.NX) and wave.attrs["periodic"] == 0
    burgers = open_fields(tmp_path / "burgers.zarr", ("state",))
    assert burgers.state.shape == (24, 21, 1, 1, 64) and list(split_labels(burgers)).count("test") == 8
    manifest = json.loads((tmp_path / "m.json").read_text())
    assert sum(f["role"] == "input" for f in manifest["files"]) == 5


def gpo_job(tmp_path, ns_cfg, package):
    settings = {"data_seed": 0, "darcy": {"n_train": 8}, "ns": ns_cfg}
    names = ("darcy_lo", "darcy_hi", "ns_lo", "ns_hi")
    out = ns(**{n: str(tmp_path / f"{n}.zarr") for n in names}, manifest=str(tmp_path / "m.json"))
    return ns(input=ns(package=package), output=out, params=ns(settings=settings, scale="full"))


@pytest.fixture
def neuraloperator_package(tmp_path):
    import torch

    from repro.data.fields.neuraloperator import NEURALOP_DATA

    folder = tmp_path / "pkg" / NEURALOP_DATA
    folder.mkdir(parents=True)
    for name, n, size in (("train_16", 16, 16), ("test_16", 4, 16), ("test_32", 4, 32)):
        torch.save({"x": torch.rand(n, size, size), "y": torch.rand(n, size, size)}, folder / f"darcy_{name}.pt")
    return str(tmp_path / "pkg")


def test_gpo_data_stage_reads_the_fno_release_and_pdebench_ns(tmp_path, neuraloperator_package):
    fno_mat.write(tmp_path / "fno")
    base = {"visc": 1e-3, "dt": 0.02, "record_every": 1.0, "frames": 5, "resolution": 32, "test_resolution": 64}
    gpo_data.main(
        gpo_job(
            tmp_path / "a",
            base | {"source": "fno_mat", "path": str(tmp_path / "fno" / fno_mat.V73), "n_train": 6, "n_test": 4},
            neuraloperator_package,
        )
    )
    lo = open_fields(tmp_path / "a/ns_lo.zarr", ("vorticity",))
    assert lo.vorticity.shape == (10, 5, 32, 32)
    pdebench.write(tmp_path / "pde")
    cfg = base | {
        "source": "pdebench",
        "path": str(tmp_path / "pde" / pdebench.NS),
        "n_train": 1,
        "n_test": 1,
        "test_resolution": 16,
        "resolution": 8,
    }
    gpo_data.main(gpo_job(tmp_path / "b", cfg, neuraloperator_package))
    hi = open_fields(tmp_path / "b/ns_hi.zarr", ("vorticity",))
    assert hi.vorticity.shape == (1, 5, 16, 16) and np.abs(hi.vorticity.values).max() > 0.1
    with pytest.raises(InputError, match="burgers_1d"):
        gpo_data.main(
            gpo_job(tmp_path / "c", cfg | {"path": str(tmp_path / "pde" / pdebench.BURGERS)}, neuraloperator_package)
        )
