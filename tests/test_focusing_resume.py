"""Focusing end to end on the Objaverse-layout fixture: data stage, training interrupted and resumed bit for
bit, the packed sparse renderer against the dense one, the mode's active sets, and the GPU probe on the CPU."""

from types import SimpleNamespace as NS

import numpy as np
import pytest
import torch
import yaml
from interrupt import Interrupted, interrupted_at, same_arrays

from repro.fixtures import objaverse_obj
from repro.papers.focusing import data, gpu_probe, train
from repro.papers.focusing.model import VoxelVAE, cells_to_grid, render, render_sparse
from repro.papers.focusing.modes import MODES, Shapes, draw_step

SHAPES = {
    "source": "folder",
    "test_fraction": 0.1,
    "max_bad_fraction": 0.0,
    "extent": 0.7,
    "views": 3,
    "image": 12,
    "fov_deg": 50,
    "camera_radius": 3.0,
    "surface_points": 500,
    "base_cells": 4,
    "band_cells": 1.0,
    "margin_cells": 0.5,
    "zoom_pad": 0.05,
    "section_splits": [1, 2],
}
SETTINGS = {
    "fine_per_cell": 4,
    "model": {"width": 4, "latent": 2, "hidden": 8},
    "train": {
        "epochs": 2,
        "lr": 0.01,
        "views_per_step": 1,
        "samples_per_voxel": 1.0,
        "loss": {"mask": 0.5, "normal": 0.1, "kl": 0.001},
    },
    "timing_repeats": 1,
}


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("focusing")
    objaverse_obj.write(tmp / "objaverse")
    out = NS(shapes=str(tmp / "shapes"), manifest=str(tmp / "manifest.json"))
    settings = {"data_seed": 0, "shapes": SHAPES | {"mesh_dir": str(tmp / "objaverse")}, "fine_per_cell": 4}
    data.main(NS(input=NS(), output=out, params=NS(settings=settings)))
    return out.shapes


def run(shapes: str, out) -> str:
    out.mkdir(exist_ok=True)
    job = NS(
        input=NS(shapes=shapes),
        output=NS(runs=str(out / "s0.npz"), training=str(out / "s0.json")),
        wildcards=NS(s="0"),
        params=NS(settings=SETTINGS, seed=0, device="cpu"),
    )
    train.main(job)
    return job.output.runs


def test_objaverse_folder_gives_views_sections_and_modes(shapes):
    store = Shapes(shapes)
    assert len(store.names) == objaverse_obj.OBJECTS and store.of("test") == store.names[-4:]
    shape = store[store.of("train")[0]]
    assert shape["views/depth"].shape == (3, 12, 12) and shape["views/carved"].shape == (3, 4, 4, 4)
    assert np.isfinite(shape["views/depth"]).any() and np.isinf(shape["views/depth"]).any()
    assert np.all(shape["views/carved"] <= shape["views/frustum"])
    assert set(shape["sections/view"]) == {0, 1, 2}
    rng = np.random.default_rng(0)
    counts = {m: int(draw_step(shape, store.cams, m, np.random.default_rng(1), 1)[3].sum()) for m in MODES}
    assert counts["random"] == counts["focusing"] <= counts["frustum"]
    views = [draw_step(shape, store.cams, m, rng, 1)[0] for m in ("focusing", "frustum")]
    assert views[0].shape == (1, 4, 4)


def test_shape_cache_stays_within_its_bytes(shapes):
    store = Shapes(shapes, cache_bytes=1)
    one = sum(a.nbytes for a in store[store.names[0]].values())
    store = Shapes(shapes, cache_bytes=3 * one)
    for name in store.names:
        store[name]
        assert store.cached_bytes() <= 3 * one or len(store._cache) == 1
    assert len(store._cache) < len(store.names)


def test_interrupted_training_resumes_bit_for_bit(shapes, tmp_path, monkeypatch):
    reference = run(shapes, tmp_path / "reference")
    with interrupted_at(monkeypatch, 1) as hits, pytest.raises(Interrupted):
        run(shapes, tmp_path / "resumed")
    assert hits == [1]
    assert list((tmp_path / "resumed" / "checkpoints").glob("*.pt"))
    same_arrays(reference, run(shapes, tmp_path / "resumed"))
    assert not list((tmp_path / "resumed" / "checkpoints").glob("*.pt"))


def test_packed_sparse_renderer_equals_the_dense_one_and_cells_stay_sparse():
    torch.manual_seed(0)
    vae = VoxelVAE(4, 2, 8, 4)
    active = torch.zeros(2, 2, 2, dtype=torch.bool)
    active[0, 0, 0] = active[1, 1, 0] = True
    cells = vae.decode_cells(torch.randn(2, 2, 2, 2), active, 0.25)
    assert cells.shape == (2, 64) and cells.min() > 0
    grid = cells_to_grid(cells, active, 4)
    assert grid[:4, :4, :4].min() > 0 and grid[4:, :4].abs().max() == 0
    o = torch.tensor([[-3.0, -0.5, -0.5], [-3.0, 0.5, -0.5], [0.3, 3.0, 0.4]])
    d = torch.nn.functional.normalize(torch.tensor([[1.0, 0.05, 0.02], [1.0, 0.0, 0.01], [-0.1, -1.0, 0.0]]), dim=1)
    lo = torch.full((3,), -1.0)
    dense = render(grid, lo, 2.0, o, d, 64)
    sparse = render_sparse(cells, active, 4, lo, 2.0, o, d, 64)
    assert torch.allclose(dense[0], sparse[0], atol=1e-5) and torch.allclose(dense[1], sparse[1], atol=1e-6)
    block = torch.zeros(8, 8, 8)
    block[:4] = 1e4  # opaque slab x < 0 of the cube [-1, 1]^3
    depth, opacity = render(block, lo, 2.0, torch.tensor([[-3.0, 0.1, 0.1]]), torch.tensor([[1.0, 0.0, 0.0]]), 64)
    assert float(opacity) == pytest.approx(1.0) and float(depth) == pytest.approx(2.0, abs=2 / 64)


def test_gpu_probe_steps_on_cpu(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["focusing"]
    vae, make_batch, loss = gpu_probe.build(section, "cpu")
    value = loss(vae, make_batch(2))
    value.backward()
    assert np.isfinite(float(value.detach()))
    assert all(p.grad is not None for p in vae.parameters())
