"""Flower-lite's distinctive properties: warps are exact identities/rolls, pointwise-only mixing, resumable training."""

import numpy as np
import pytest
import torch
from torch import nn

from repro.papers.flower import train as flower_train
from repro.papers.flower.model import Flower, SelfWarp, warp


def test_zero_displacement_with_identity_projections_is_the_identity():
    checks = flower_train.warp_checks(0)
    assert checks["identity_max_abs_diff"] <= 1e-6 and checks["integer_roll_max_abs_diff"] <= 1e-6


def test_half_cell_displacement_interpolates_linearly_and_wraps():
    values = torch.arange(4.0).view(1, 1, 1, 4)
    shift = torch.zeros(1, 2, 1, 4)
    shift[:, 0] = 0.5
    torch.testing.assert_close(warp(values, shift)[0, 0, 0], torch.tensor([0.5, 1.5, 2.5, 1.5]))


def test_flower_has_no_spatial_kernels_fourier_or_attention():
    model = Flower(3, 2, width=8, heads=2, levels=2)
    kinds = {type(m) for m in model.modules()}
    assert not kinds & {nn.Conv2d, nn.Conv1d, nn.MultiheadAttention}
    assert not any(p.is_complex() for p in model.parameters())


def test_output_at_a_point_depends_only_on_where_the_heads_sample():
    torch.manual_seed(0)
    layer = SelfWarp(4, 2)  # fresh: zero displacements, so each point sees only itself
    u = torch.randn(1, 4, 8, 8, requires_grad=True)
    layer(u)[0, :, 3, 5].sum().backward()
    grad = u.grad.abs().sum(1)[0]
    assert grad[3, 5] > 0 and grad.sum() == grad[3, 5]


def test_one_model_runs_on_2d_and_1d_grids():
    model = Flower(2, 1, width=8, heads=2, levels=2)
    assert model(torch.randn(2, 2, 16, 16)).shape == (2, 1, 16, 16)
    assert model(torch.randn(2, 2, 1, 16)).shape == (2, 1, 1, 16)
    assert torch.all(model.first_warp().displacements(torch.randn(1, 8, 1, 16))[:, :, 1] == 0)


def test_interrupted_training_resumes_to_the_same_weights(tmp_path):
    settings = {"train": {"epochs": 4, "batch": 4, "lr": 0.01}}
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(12, 2, 8, 8)).astype(np.float32), rng.normal(size=(12, 1, 8, 8)).astype(np.float32)
    torch.manual_seed(1)
    start = Flower(2, 1, width=8, heads=2).state_dict()
    reference = Flower(2, 1, width=8, heads=2)
    reference.load_state_dict(start)
    flower_train.fit(reference, x, y, settings, 0, tmp_path / "ref.pt")
    calls = {"n": 0}

    def failing(model, batch):
        calls["n"] += 1
        if calls["n"] == 8:
            raise RuntimeError("killed")
        return flower_train.mse_loss(model, batch)

    model = Flower(2, 1, width=8, heads=2)
    model.load_state_dict(start)
    with pytest.raises(RuntimeError, match="killed"):
        flower_train.fit(model, x, y, settings, 0, tmp_path / "ckpt.pt", loss_fn=failing)
    resumed = Flower(2, 1, width=8, heads=2)
    resumed.load_state_dict(start)
    assert flower_train.fit(resumed, x, y, settings, 0, tmp_path / "ckpt.pt").resumed_from == 2
    for name, value in reference.state_dict().items():
        torch.testing.assert_close(resumed.state_dict()[name], value, rtol=0, atol=0)
