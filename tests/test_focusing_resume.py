"""Focusing end to end on tiny meshes in the folder layout: data stage, training interrupted and resumed bit
for bit, the renderer's sparse path, and the GPU probe on the CPU."""

from types import SimpleNamespace as NS

import numpy as np
import pytest
import torch
import yaml
from interrupt import Interrupted, interrupted_at, same_arrays

from repro.papers.focusing import data, gpu_probe, train
from repro.papers.focusing.model import VoxelVAE, render

CUBE = """v -1 -1 -1\nv 1 -1 -1\nv 1 1 -1\nv -1 1 -1\nv -1 -1 1\nv 1 -1 1\nv 1 1 1\nv -1 1 1
f 1 2 3 4\nf 5 8 7 6\nf 1 5 6 2\nf 2 6 7 3\nf 3 7 8 4\nf 4 8 5 1\n"""
TETRA = "v 0 0 1\nv 1 0 -1\nv -1 1 -1\nv -1 -1 -1\nf 1 2 3\nf 1 3 4\nf 1 4 2\nf 2 4 3\n"

SHAPES = {
    "source": "folder",
    "test_fraction": 0.34,
    "extent": 0.7,
    "views": 4,
    "image": 12,
    "fov_deg": 50,
    "camera_radius": 3.0,
    "surface_points": 500,
    "base_cells": 8,
    "band_cells": 1.0,
    "margin_cells": 0.5,
    "zoom_pad": 0.05,
    "zoom_cells": [4, 6],
    "target_active": [1, 100],
}
SETTINGS = {
    "fine_per_cell": 4,
    "model": {"width": 4, "latent": 2, "hidden": 8},
    "train": {
        "epochs": 3,
        "lr": 0.01,
        "views_per_step": 2,
        "samples_per_voxel": 1.0,
        "loss": {"mask": 0.5, "normal": 0.1, "kl": 0.001},
    },
    "seeds": [0],
}


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("focusing")
    meshes = tmp / "meshes"
    meshes.mkdir()
    (meshes / "a_cube.obj").write_text(CUBE)
    (meshes / "b_tetra.obj").write_text(TETRA)
    (meshes / "c").mkdir()
    (meshes / "c" / "model.obj").write_text(CUBE)
    out = NS(shapes=str(tmp / "shapes.npz"), manifest=str(tmp / "manifest.json"))
    settings = {"data_seed": 0, "shapes": SHAPES | {"mesh_dir": str(meshes)}, "fine_per_cell": 4}
    data.main(NS(input=NS(), output=out, params=NS(settings=settings)))
    return out.shapes


def run(shapes: str, out) -> str:
    out.mkdir(exist_ok=True)
    job = NS(
        input=NS(shapes=shapes),
        output=NS(runs=str(out / "runs.npz"), training=str(out / "training.json")),
        params=NS(settings=SETTINGS, seed=0, device="cpu"),
    )
    train.main(job)
    return job.output.runs


def test_folder_meshes_give_views_and_modes(shapes):
    with np.load(shapes) as arrays:
        assert list(arrays["names"]) == ["a_cube", "b_tetra", "c"]
        assert list(arrays["split"]) == ["train", "train", "test"]
        assert arrays["a_cube/depth"].shape == (4, 12, 12)
        assert np.isfinite(arrays["a_cube/depth"]).any() and np.isinf(arrays["a_cube/depth"]).any()
        assert arrays["a_cube/dense/active"].all()
        assert arrays["a_cube/carved/active"].sum() < arrays["a_cube/dense/active"].sum()


def test_interrupted_training_resumes_bit_for_bit(shapes, tmp_path, monkeypatch):
    reference = run(shapes, tmp_path / "reference")
    with interrupted_at(monkeypatch, 1) as hits, pytest.raises(Interrupted):
        run(shapes, tmp_path / "resumed")
    assert hits == [1]
    assert list((tmp_path / "resumed" / "checkpoints").glob("*.pt"))
    same_arrays(reference, run(shapes, tmp_path / "resumed"))


def test_sparse_decoder_fills_only_active_cells_and_renders_a_block():
    torch.manual_seed(0)
    vae = VoxelVAE(4, 2, 8, 4)
    active = torch.zeros(2, 2, 2, dtype=torch.bool)
    active[0, 0, 0] = True
    sigma = vae.decode(torch.randn(2, 2, 2, 2), active, 0.25)
    assert sigma.shape == (8, 8, 8) and sigma[:4, :4, :4].min() > 0 and sigma[4:].abs().max() == 0
    block = torch.zeros(8, 8, 8)
    block[:4] = 1e4  # opaque slab x < 0 of the cube [-1, 1]^3
    o, d = torch.tensor([[-3.0, 0.1, 0.1]]), torch.tensor([[1.0, 0.0, 0.0]])
    depth, opacity = render(block, torch.full((3,), -1.0), 2.0, o, d, 64)
    assert float(opacity) == pytest.approx(1.0) and float(depth) == pytest.approx(2.0, abs=2 / 64)


def test_gpu_probe_steps_on_cpu(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["focusing"]
    vae, make_batch, loss = gpu_probe.build(section, "cpu")
    value = loss(vae, make_batch(2))
    value.backward()
    assert np.isfinite(float(value.detach()))
    assert all(p.grad is not None for p in vae.parameters())
