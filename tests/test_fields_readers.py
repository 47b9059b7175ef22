"""The canonical fields store and the real-benchmark readers, on tiny files written in the real layouts."""

import h5py
import numpy as np
import pytest
import torch
from scipy import io

from repro.data.fields import neuraloperator, readers
from repro.data.fields.store import make_dataset, open_fields, split_of, write_fields
from repro.workflow.io import InputError


def test_store_round_trip_keeps_layout_split_and_attrs(tmp_path):
    ds = make_dataset(
        {"u": np.ones((3, 2, 4, 4)), "s": np.zeros((3, 2, 2, 4, 4))},
        np.array(["train", "train", "test"]),
        {"dx": 0.25, "dy": 0.25, "dt": 0.5, "source": "test", "periodic": True},
        channels={"s": ["a", "b"]},
    )
    write_fields(tmp_path / "f.zarr", ds)
    back = open_fields(tmp_path / "f.zarr", ("u", "s"))
    assert back.u.dims == ("sample", "time", "y", "x") and back.s.dims == ("sample", "time", "channel", "y", "x")
    assert back.u.dtype == np.float32 and back.attrs["dt"] == 0.5 and back.attrs["periodic"] == 1
    assert split_of(back, "test").sizes["sample"] == 1
    with pytest.raises(InputError, match="missing variables"):
        open_fields(tmp_path / "f.zarr", ("vorticity",))
    with pytest.raises(InputError, match="cannot open"):
        open_fields(tmp_path / "none.zarr")
    with pytest.raises(ValueError, match="split labels"):
        make_dataset({"u": np.ones((1, 1, 2, 2))}, np.array(["dev"]), {"dx": 1, "dt": 1, "source": "", "periodic": 0})


def test_neuraloperator_members_are_read_with_torch_load(tmp_path):
    folder = tmp_path / neuraloperator.NEURALOP_DATA
    folder.mkdir(parents=True)
    torch.save({"x": torch.rand(2, 4, 4) > 0.5, "y": torch.rand(2, 4, 4)}, folder / "darcy_test_16.pt")
    out = torch.rand(3, 5, 8, dtype=torch.float64)
    torch.save({"input": out[:, 0], "output": out, "visc": torch.tensor([[0.01]])}, folder / "burgers_lowres.pt")
    a, u = neuraloperator.neuraloperator_darcy(tmp_path, "test_16")
    assert a.shape == u.shape == (2, 4, 4)
    traj, visc = neuraloperator.neuraloperator_burgers(tmp_path)
    assert traj.shape == (3, 5, 8) and visc == pytest.approx(0.01)
    with pytest.raises(InputError, match="missing"):
        neuraloperator.neuraloperator_darcy(tmp_path, "train_16")
    torch.save({"x": torch.zeros(1)}, folder / "darcy_train_16.pt")
    with pytest.raises(InputError, match="lacks tensors"):
        neuraloperator.neuraloperator_darcy(tmp_path, "train_16")


def test_sevir_vil_reader_makes_downsampled_windows(tmp_path):
    path = tmp_path / "SEVIR_VIL_STORMEVENTS_2018_0101_0630.h5"
    with h5py.File(path, "w") as f:
        f["vil"] = np.random.default_rng(0).integers(0, 255, size=(2, 12, 12, 49), dtype=np.uint8)
        f["id"] = np.array([b"S1", b"S2"])
    seq = readers.sevir_vil(path, length=25, stride=12, downsample=3)
    assert seq.shape == (2 * 3, 25, 4, 4)
    with h5py.File(tmp_path / "bad.h5", "w") as f:
        f["ir069"] = np.zeros((1, 2, 2, 49))
    with pytest.raises(InputError, match="no 'vil'"):
        readers.sevir_vil(tmp_path / "bad.h5", length=25, stride=12, downsample=1)
    (tmp_path / "junk.h5").write_bytes(b"not hdf5")
    with pytest.raises(InputError, match="cannot open as HDF5"):
        readers.sevir_vil(tmp_path / "junk.h5", length=25, stride=12, downsample=1)


def test_meteonet_npz_reader_maps_dbz_to_the_vil_scale(tmp_path):
    np.savez(tmp_path / "reflectivity.npz", data=np.full((6, 4, 4), 35.0), dates=np.arange(6))
    seq = readers.meteonet_npz(tmp_path / "reflectivity.npz", length=3, stride=3, dbz_max=70.0)
    assert seq.shape == (2, 3, 4, 4) and np.allclose(seq, 127.5)
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(InputError, match="no 'data'"):
        readers.meteonet_npz(tmp_path / "other.npz", length=3, stride=3, dbz_max=70.0)


def test_fno_mat_reader_handles_v5_and_v73_files(tmp_path):
    u = np.random.default_rng(1).normal(size=(2, 8, 8, 5))
    a = np.random.default_rng(2).normal(size=(2, 8, 8))
    io.savemat(tmp_path / "ns_v5.mat", {"u": u, "a": a})
    np.testing.assert_allclose(
        readers.fno_navier_stokes(tmp_path / "ns_v5.mat")[:, 1:], np.moveaxis(u, -1, 1), rtol=1e-6
    )
    with h5py.File(tmp_path / "ns_V1e-3_N5000_T50.mat", "w") as f:  # v7.3: column-major, axes reversed
        f["u"], f["a"] = u.T, a.T
    w = readers.fno_navier_stokes(tmp_path / "ns_V1e-3_N5000_T50.mat")
    assert w.shape == (2, 6, 8, 8)
    np.testing.assert_allclose(w[:, 0], a, rtol=1e-6)
    io.savemat(tmp_path / "darcy.mat", {"coeff": a})
    with pytest.raises(InputError, match="lacks variables"):
        readers.fno_navier_stokes(tmp_path / "darcy.mat")


def test_pdebench_reader_reads_both_layouts(tmp_path):
    rng = np.random.default_rng(3)
    with h5py.File(tmp_path / "2D_diff-react_NA_NA.h5", "w") as f:
        for seed in ("0000", "0001"):
            f[f"{seed}/data"] = rng.normal(size=(4, 8, 6, 2))
    out = readers.pdebench_hdf5(tmp_path / "2D_diff-react_NA_NA.h5", [])
    assert out.shape == (2, 4, 2, 6, 8)
    with h5py.File(tmp_path / "2D_CFD.h5", "w") as f:
        f["density"], f["pressure"] = rng.normal(size=(3, 4, 8, 6)), rng.normal(size=(3, 4, 8, 6))
    assert readers.pdebench_hdf5(tmp_path / "2D_CFD.h5", ["density", "pressure"]).shape == (3, 4, 2, 6, 8)
    with pytest.raises(InputError, match="neither fields"):
        readers.pdebench_hdf5(tmp_path / "2D_CFD.h5", ["Vx"])


def test_the_well_reader_stacks_scalar_and_vector_fields(tmp_path):
    path = tmp_path / "shear_flow_train_0.hdf5"
    rng = np.random.default_rng(4)
    with h5py.File(path, "w") as f:
        f.attrs["n_spatial_dims"] = 2
        f["dimensions/time"] = np.arange(5) * 0.1
        f["t0_fields/tracer"] = rng.normal(size=(2, 5, 8, 6))
        f["t1_fields/velocity"] = rng.normal(size=(2, 5, 8, 6, 2))
    fields, names, dt = readers.the_well_hdf5(path, ["tracer", "velocity"])
    assert fields.shape == (2, 5, 3, 6, 8) and names == ["tracer", "velocity_x", "velocity_y"]
    assert dt == pytest.approx(0.1)
    with pytest.raises(InputError, match="no field 'pressure'"):
        readers.the_well_hdf5(path, ["pressure"])
    with h5py.File(tmp_path / "3d.hdf5", "w") as f:
        f.attrs["n_spatial_dims"] = 3
    with pytest.raises(InputError, match="n_spatial_dims"):
        readers.the_well_hdf5(tmp_path / "3d.hdf5", ["tracer"])


def test_prediction_files_round_trip_and_a_bad_file_is_named(tmp_path):
    from repro.workflow.fields_io import load_arrays, save_arrays

    save_arrays(tmp_path / "p.npz", {"a/b": np.arange(3.0)})
    np.testing.assert_array_equal(load_arrays(tmp_path / "p.npz")["a/b"], np.arange(3.0))
    (tmp_path / "bad.npz").write_bytes(b"junk")
    with pytest.raises(InputError, match="bad.npz"):
        load_arrays(tmp_path / "bad.npz")
