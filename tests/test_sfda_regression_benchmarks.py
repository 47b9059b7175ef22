"""The paper-scale readers (dSprites, MPI3D) on files in the releases' layouts, from the rehearsal's fixture writers:
values against a plain np.load, refused rows counted and named, bad files named, memory flat in the file's size."""

from __future__ import annotations

import tracemalloc
import zipfile

import numpy as np
import pytest

from repro.fixtures import dsprites as dsprites_fixture
from repro.fixtures import mpi3d as mpi3d_fixture
from repro.papers.sfda_regression import benchmarks as bm
from repro.papers.sfda_regression.tasks import build_benchmark_pair, same_domain
from repro.workflow.io import InputError


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("benchmarks")
    dsprites_fixture.write(root / "dsprites")
    mpi3d_fixture.write(root / "mpi3d")
    return root


def dsprites_path(files):
    return files / "dsprites" / dsprites_fixture.FILE


@pytest.mark.parametrize("chunk", [7, 64, 10_000])
def test_streamed_rows_equal_a_plain_load(files, chunk):
    path = dsprites_path(files)
    idx = np.array([0, 5, 6, 63, 64, 400, 799])
    member = bm.NpzMember(path, "imgs")
    got = member.rows(idx, chunk_rows=chunk)
    member.close()
    with np.load(path, allow_pickle=False) as data:
        assert np.array_equal(got, data["imgs"][idx])


def test_compressed_members_stream_too(files):
    path = files / "mpi3d" / "mpi3d_realistic.npz"
    member = bm.NpzMember(path, "images")
    got = member.rows(np.array([3, 250]), chunk_rows=50)
    member.close()
    with np.load(path) as data:
        assert np.array_equal(got, data["images"][[3, 250]])


def test_reading_a_few_rows_keeps_memory_to_a_chunk(files):
    path = files / "mpi3d" / "mpi3d_toy.npz"
    member = bm.NpzMember(path, "images")
    tracemalloc.start()
    member.rows(np.array([1, 399]), chunk_rows=8)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    member.close()
    whole = 400 * 64 * 64 * 3
    assert peak < whole / 10, f"peak {peak} bytes while the array holds {whole}"


def test_dsprites_split_renders_the_domain_and_reads_the_factor(files):
    path = dsprites_path(files)
    with np.load(path, allow_pickle=False) as data:
        latents = data["latents_values"]
    idx = np.array([2, 10, 30, 31])
    refused = bm.Refused()
    images, y = bm.dsprites_split(path, "noisy", "posX", idx, 16, 0, refused)
    assert images.shape == (4, 16, 16, 3) and images.dtype == np.float32
    assert np.array_equal(y, latents[idx, 4]) and refused.to_dict() == {"rows": 4, "refused": 0, "first_refused": []}
    colour, _ = bm.dsprites_split(path, "color", "scale", idx, 16, 0, bm.Refused())
    assert colour.max() <= 1.0 and np.isclose(colour.min(), 0.0)  # black background
    assert images.mean() > 0.4 > colour.mean()  # uniform noise (mean 0.5) fills the background


def test_dsprites_rows_outside_the_documented_ranges_are_refused_and_named(tmp_path, files):
    with np.load(dsprites_path(files), allow_pickle=True) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["latents_values"][[4, 9], 2] = 2.0  # scale outside [0.5, 1]
    arrays["latents_values"][11, 4] = np.nan
    path = tmp_path / dsprites_fixture.FILE
    np.savez(path, **arrays)
    refused = bm.Refused()
    images, y = bm.dsprites_split(path, "color", "scale", np.arange(20), 32, 0, refused)
    assert len(images) == len(y) == 17 and refused.count == 3
    assert [f.split(":")[0] for f in refused.first] == ["row 4", "row 9", "row 11"]
    refused.check(path, max_bad_fraction=0.2)
    with pytest.raises(InputError, match=r"3 of 20 sampled rows refused.*row 4: latents"):
        refused.check(path, max_bad_fraction=0.1)


def test_bad_files_are_named(tmp_path, files):
    missing = tmp_path / "no_imgs.npz"
    np.savez(missing, latents_values=np.zeros((3, 6)))
    with pytest.raises(InputError, match="has no array 'imgs'"):
        bm.NpzMember(missing, "imgs")
    text = tmp_path / "text.npz"
    text.write_text("not an archive")
    with pytest.raises(InputError, match="not a readable .npz archive"):
        bm.NpzMember(text, "imgs")
    wrong = tmp_path / dsprites_fixture.FILE
    np.savez(wrong, imgs=np.zeros((5, 64, 64), np.float32), latents_values=np.ones((5, 6)))
    with pytest.raises(InputError, match="not the dSprites layout"):
        bm.dsprites_split(wrong, "color", "scale", np.arange(2), 32, 0, bm.Refused())
    cut = tmp_path / "cut.npz"
    with zipfile.ZipFile(dsprites_path(files)) as src, zipfile.ZipFile(cut, "w") as dst:
        dst.writestr("imgs.npy", src.read("imgs.npy")[:100_000])
    member = bm.NpzMember(cut, "imgs")
    with pytest.raises(InputError, match="ends early"):
        member.rows(np.array([700]))


def test_mpi3d_factors_come_from_the_row_major_index(files):
    sizes = mpi3d_fixture.SIZES
    idx = np.array([0, 21, 399])
    images, y = bm.mpi3d_split(files / "mpi3d", "toy", "horizontal_axis", idx, 32, sizes, bm.Refused())
    levels = np.unravel_index(idx, sizes)[5]
    assert np.allclose(y, levels / (mpi3d_fixture.AXIS - 1)) and images.shape == (3, 32, 32, 3)
    with pytest.raises(InputError, match="expected uint8"):
        bm.mpi3d_split(files / "mpi3d", "toy", "vertical_axis", idx, 32, bm.MPI3D_SIZES, bm.Refused())
    with pytest.raises(InputError, match="not a readable|cannot|No such"):
        bm.mpi3d_split(files / "mpi3d", "real", "vertical_axis", idx, 32, sizes, bm.Refused())


def settings(files):
    return {
        "samples": {"source": 60, "target": 40, "test": 40},
        "image_size": 16,
        "dsprites": {"path": str(dsprites_path(files)), "max_bad_fraction": 0.0},
        "mpi3d": {"folder": str(files / "mpi3d"), "factor_sizes": list(mpi3d_fixture.SIZES)},
    }


@pytest.mark.parametrize(
    "transfer",
    [
        {"dataset": "dsprites", "source_domain": "color", "target_domain": "noisy", "factor": "scale"},
        {"dataset": "mpi3d", "source_domain": "toy", "target_domain": "realistic", "factor": "horizontal_axis"},
    ],
)
def test_benchmark_pairs_are_disjoint_samples_normalised_by_the_source(files, transfer):
    pair, record = build_benchmark_pair(settings(files), transfer, 0)
    assert pair.x_source.shape == (60, 16 * 16 * 3) and pair.x_target.shape[0] == 40 and pair.x_test.shape[0] == 40
    assert pair.y_source.min() == 0.0 and pair.y_source.max() == pytest.approx(1.0)
    assert set(record) == {"source", "target", "test", "files"} and not same_domain(transfer)
    assert all(len(f["sha256"]) == 64 and f["bytes"] > 0 for f in record["files"])
    again, _ = build_benchmark_pair(settings(files), transfer, 0)
    assert np.array_equal(again.x_test, pair.x_test)
