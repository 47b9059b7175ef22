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


def test_meteonet_reader_maps_dbz_to_the_vil_scale_and_reads_shapes_from_the_header(tmp_path):
    np.savez(tmp_path / "reflectivity.npz", data=np.full((6, 4, 4), 35.0), dates=np.arange(6))
    assert readers.meteonet_shape(tmp_path / "reflectivity.npz") == (6, 4, 4)
    frames = readers.meteonet_frames(tmp_path / "reflectivity.npz", dbz_max=70.0)
    assert frames.shape == (6, 4, 4) and np.allclose(frames, 127.5)
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(InputError, match="no 'data'"):
        readers.meteonet_frames(tmp_path / "other.npz", dbz_max=70.0)
    with pytest.raises(InputError, match="cannot read array 'data'"):
        readers.meteonet_shape(tmp_path / "other.npz")


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
    # only the samples asked for are read from a v7.3 file (the sample axis is HDF5's last)
    part = readers.fno_navier_stokes(tmp_path / "ns_V1e-3_N5000_T50.mat", [slice(1, 2)])
    np.testing.assert_allclose(part, w[1:2])
    io.savemat(tmp_path / "darcy.mat", {"coeff": a})
    with pytest.raises(InputError, match="lacks variables"):
        readers.fno_navier_stokes(tmp_path / "darcy.mat")


def test_prediction_files_round_trip_and_a_bad_file_is_named(tmp_path):
    from repro.workflow.fields_io import load_arrays, save_arrays

    save_arrays(tmp_path / "p.npz", {"a/b": np.arange(3.0)})
    np.testing.assert_array_equal(load_arrays(tmp_path / "p.npz")["a/b"], np.arange(3.0))
    (tmp_path / "bad.npz").write_bytes(b"junk")
    with pytest.raises(InputError, match="bad.npz"):
        load_arrays(tmp_path / "bad.npz")
