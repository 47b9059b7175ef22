"""Readers of the paper-scale field data on files from the project's fixture writers (repro.fixtures), which
follow each data set's published layout: SEVIR (catalog + VIL HDF5, missing-data code 255), The Well (time-constant
fields, coordinates, boundary conditions), PDEBench (1-D Burgers, 2-D incompressible NS, refused layouts) and the
FNO release's .mat files."""

from __future__ import annotations

import tracemalloc

import h5py
import numpy as np
import pandas as pd
import pytest

from repro.data.fields import pdebench, readers, sevir, the_well
from repro.fixtures import fno_mat as fno_fixture
from repro.fixtures import pdebench as pdebench_fixture
from repro.fixtures import sevir as sevir_fixture
from repro.fixtures import the_well as well_fixture
from repro.workflow.io import InputError

WINDOWS = {
    "train": ["2017-01-01", "2019-01-01"],
    "val": ["2019-01-01", "2019-10-01"],
    "test": ["2019-10-01", "2021-01-01"],
}


@pytest.fixture(scope="module")
def sevir_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("sevir")
    sevir_fixture.write(root, size=96)
    return root


def vil_files(root):
    return sorted(str(p) for p in (root / "data").rglob("*.h5"))


def test_sevir_events_come_from_the_catalog_by_type_and_time_window(sevir_root):
    catalog = sevir.read_catalog(sevir_root / "CATALOG.csv")
    chosen = sevir.select(catalog, vil_files(sevir_root), WINDOWS)
    assert {s: len(e) for s, e in chosen.items()} == {"train": 4, "val": 2, "test": 2}
    assert set(chosen["train"]["img_type"]) == {"vil"}  # the ir069 rows of the same events are skipped
    hail = sevir.select(catalog, vil_files(sevir_root), WINDOWS, event_types=["Hail"])
    assert sorted(hail["train"]["id"]) == ["S0000002"] and list(hail["val"]["id"]) == ["S0000006"]
    only_2018 = [f for f in vil_files(sevir_root) if "/2018/" in f]
    assert len(sevir.select(catalog, only_2018, WINDOWS)["test"]) == 0
    with pytest.raises(InputError, match="not a VIL file of the catalog"):
        sevir.select(catalog, [str(sevir_root / "elsewhere.h5")], WINDOWS)


def test_missing_code_255_is_nan_before_block_averaging():
    raw = np.zeros((6, 6, 49), np.uint8)
    raw[:3, :3] = 255  # a missing block
    raw[:3, 3:] = 100
    raw[3:, :3] = 255
    raw[4, 1] = 90  # one valid pixel among missing ones
    frames, missing = sevir.decode_vil(raw, 3)
    assert missing == int(np.sum(raw == 255))
    assert np.isnan(frames[0, 0, 0])  # all missing -> NaN, never 255 nor 85
    assert frames[0, 0, 1] == pytest.approx(100.0)
    assert frames[0, 1, 0] == pytest.approx(90.0)  # the mean of the valid pixels only
    assert np.nanmax(frames) <= 254


def test_a_catalog_row_that_does_not_match_its_file_is_refused_and_named(sevir_root, tmp_path):
    catalog = pd.read_csv(sevir_root / "CATALOG.csv")
    bad = catalog.iloc[0].copy()
    bad["id"], bad["file_index"], bad["time_utc"] = "S0000099", 1, "2018-05-04 12:00:00"
    pd.concat([catalog, bad.to_frame().T]).to_csv(tmp_path / "CATALOG.csv", index=False)
    chosen = sevir.select(sevir.read_catalog(tmp_path / "CATALOG.csv"), vil_files(sevir_root), WINDOWS)
    ids = sevir.check_files(chosen)
    results = list(sevir.read_events(chosen["train"], ids, downsample=3, max_missing=0.5))
    refused = [(i, why) for i, frames, _, why in results if frames is None]
    assert refused == [("S0000099", "catalog id does not match the file's id at file_index")]
    assert all(f.shape == (49, 32, 32) for _, f, _, _ in results if f is not None)


def test_a_missing_test_file_is_found_before_any_training_file_is_read(sevir_root, tmp_path, monkeypatch):
    catalog = sevir.read_catalog(sevir_root / "CATALOG.csv")
    chosen = sevir.select(catalog, vil_files(sevir_root), WINDOWS)
    test_file = chosen["test"]["path"].iloc[0]
    chosen["test"] = chosen["test"].assign(path=str(tmp_path / "gone" / test_file.split("/")[-1]))
    opened = []
    real = sevir._h5
    monkeypatch.setattr(sevir, "_h5", lambda p: opened.append(str(p)) or real(p))
    with pytest.raises(InputError, match="missing .*test split"):
        sevir.check_files(chosen)
    assert opened == []  # nothing was opened before the test file was found missing


def test_a_broken_catalog_or_file_is_an_input_error_naming_it(sevir_root, tmp_path):
    (tmp_path / "CATALOG.csv").write_text("id,file_name\nS1,x.h5\n")
    with pytest.raises(InputError, match="lacks columns"):
        sevir.read_catalog(tmp_path / "CATALOG.csv")
    with pytest.raises(InputError, match="missing"):
        sevir.read_catalog(tmp_path / "none.csv")
    catalog = sevir.read_catalog(sevir_root / "CATALOG.csv")
    chosen = sevir.select(catalog, vil_files(sevir_root), WINDOWS)
    path = chosen["test"]["path"].iloc[0]
    broken = tmp_path / "data" / "vil" / "2019" / path.split("/")[-1]
    broken.parent.mkdir(parents=True)
    with h5py.File(broken, "w") as f:
        f["vil"] = np.zeros((2, 8, 8, 10), np.uint8)
        f["id"] = np.array([b"a", b"b"])
    chosen["test"] = chosen["test"].assign(path=str(broken))
    with pytest.raises(InputError, match="want uint8"):
        sevir.check_files(chosen)


def test_the_sevir_reader_reads_one_event_at_a_time(sevir_root):
    """Memory stays flat in the number of events: reading all eight costs about what reading two does."""
    catalog = sevir.read_catalog(sevir_root / "CATALOG.csv")
    chosen = sevir.select(catalog, vil_files(sevir_root), {"all": ["2017-01-01", "2021-01-01"]})
    ids = sevir.check_files(chosen)
    peaks = []
    for n in (2, 8):
        tracemalloc.start()
        for _ in sevir.read_events(chosen["all"].iloc[:n], ids, downsample=3, max_missing=0.5):
            pass
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.3 * peaks[0]


@pytest.fixture(scope="module")
def well_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("well")
    well_fixture.write(root)
    return root


def test_the_well_reads_time_constant_fields_and_the_grid_from_the_file(well_root):
    maze = well_root / "acoustic_scattering_maze/data/train/acoustic_scattering_maze_chunk_0.hdf5"
    meta = the_well.describe(maze)
    assert meta.fields["density"] == ("t0_fields", True, False)  # no time axis in the file
    assert meta.spacing["x"] == pytest.approx(2 / well_fixture.NX)  # [-1, 1], not a unit square
    assert not meta.periodic["x"] and meta.boundary["x"][[0, -1]].all() and not meta.boundary["x"][1:-1].any()
    state, names = the_well.trajectory(meta, 1, ["pressure", "density", "velocity"])
    assert names == ["pressure", "density", "velocity_x", "velocity_y"]
    assert state.shape == (well_fixture.TIME, 4, well_fixture.NY, well_fixture.NX)
    np.testing.assert_array_equal(state[0, 1], state[-1, 1])  # the constant field repeated over time
    with h5py.File(maze) as f:
        np.testing.assert_allclose(state[3, 0], f["t0_fields/pressure"][1, 3].T)  # (x, y) stored, (y, x) read
        np.testing.assert_allclose(the_well.statics(meta, 1, ["speed_of_sound"])[0], f["t0_fields/speed_of_sound"][1].T)
    with pytest.raises(InputError, match="varies in time"):
        the_well.statics(meta, 0, ["pressure"])
    shear = the_well.describe(well_root / "shear_flow/data/test/shear_flow_Reynolds_1e4_Schmidt_1e0.hdf5")
    assert shear.periodic == {"x": True, "y": True}


def test_the_well_refuses_what_it_cannot_read(well_root, tmp_path):
    with h5py.File(tmp_path / "3d.hdf5", "w") as f:
        f.attrs["n_spatial_dims"] = 3
    with pytest.raises(InputError, match="n_spatial_dims"):
        the_well.describe(tmp_path / "3d.hdf5")
    meta = the_well.describe(well_root / "shear_flow/data/train/shear_flow_Reynolds_1e4_Schmidt_1e0.hdf5")
    with pytest.raises(InputError, match="no field"):
        the_well.trajectory(meta, 0, ["density"])
    with pytest.raises(InputError, match="missing"):
        the_well.describe(tmp_path / "none.hdf5")


@pytest.fixture(scope="module")
def pdebench_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("pdebench")
    pdebench_fixture.write(root)
    return root


def test_pdebench_reads_1d_burgers_and_2d_incompressible_ns(pdebench_root):
    burgers = pdebench.describe(pdebench_root / pdebench_fixture.BURGERS)
    assert burgers.layout == "burgers_1d" and burgers.spacing["x"] == pytest.approx(1 / 64)
    u = pdebench.sample(burgers, 3, stride=2)
    with h5py.File(pdebench_root / pdebench_fixture.BURGERS) as f:
        np.testing.assert_allclose(u[:, 0, 0], f["tensor"][3, ::2])
    ns = pdebench.describe(pdebench_root / pdebench_fixture.NS)
    assert ns.layout == "ns_incom_2d" and ns.channels == ["velocity_x", "velocity_y", "particles"]
    v = pdebench.sample(ns, 1)
    with h5py.File(pdebench_root / pdebench_fixture.NS) as f:
        np.testing.assert_allclose(v[2, 0], f["velocity"][1, 2, ..., 0].T)
    # Taylor-Green: vorticity of (sin kx cos ky, -cos kx sin ky) is 2 k sin kx sin ky
    w = pdebench.vorticity(v[:1, :2], ns.spacing["x"], ns.spacing["y"])
    assert np.abs(w).max() > 1


def test_pdebench_refuses_a_layout_by_name(tmp_path):
    with h5py.File(tmp_path / "3D_CFD.hdf5", "w") as f:
        for k in ("density", "pressure", "Vx", "Vy", "Vz"):
            f[k] = np.zeros((1, 2, 4, 4, 4))
    with pytest.raises(InputError, match="3-D CFD"):
        pdebench.describe(tmp_path / "3D_CFD.hdf5")
    with h5py.File(tmp_path / "2D_DarcyFlow.hdf5", "w") as f:
        f["nu"], f["tensor"] = np.zeros((2, 4, 4)), np.zeros((2, 1, 4, 4))
    with pytest.raises(InputError, match="Darcy"):
        pdebench.describe(tmp_path / "2D_DarcyFlow.hdf5")


def test_fno_release_files_as_published(tmp_path):
    fno_fixture.write(tmp_path)
    assert readers.fno_samples(tmp_path / fno_fixture.V73) == 40
    w = readers.fno_navier_stokes(tmp_path / fno_fixture.V73, [slice(0, 2), slice(38, 40)])
    assert w.shape == (4, 8, 64, 64)
    with open(tmp_path / fno_fixture.V73, "rb") as fh:
        assert fh.read(10) == b"MATLAB 7.3"
    assert readers.fno_navier_stokes(tmp_path / fno_fixture.V5).shape == (6, 5, 32, 32)
