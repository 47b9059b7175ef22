"""Operator baselines: shapes on any grid, matched sizes, the Galerkin attention formula, spectral truncation."""

import pytest
import torch

from repro.learning.operators import (
    FNO,
    GalerkinTransformer,
    PointAttention,
    SpectralConv2d,
    baseline,
    count_parameters,
)


@pytest.mark.parametrize("name", ["fno", "unet", "galerkin"])
def test_baselines_map_any_grid_and_match_the_target_size(name):
    model = baseline(name, 3, 2, 20000)
    assert abs(count_parameters(model) - 20000) < 0.2 * 20000
    for shape in ((2, 3, 16, 16), (1, 3, 32, 32), (2, 3, 1, 16)):
        out = model(torch.randn(*shape))
        assert out.shape == (shape[0], 2, *shape[2:])


def test_galerkin_attention_equals_its_formula():
    torch.manual_seed(0)
    layer = PointAttention(8, 2, "galerkin")
    x = torch.randn(1, 10, 8)
    q, k, v = layer.qkv(x).view(1, 10, 3, 2, 4).permute(2, 0, 3, 1, 4)
    k, v = layer.norm_k(k), layer.norm_v(v)
    expected = q @ (k.transpose(-2, -1) @ v) / 10
    manual = torch.zeros_like(expected)
    for i in range(10):
        weights = (q[:, :, i : i + 1] * k).sum(-1, keepdim=True)  # <q_i, k_j> for every j
        manual[:, :, i] = (weights * v).sum(2) / 10
    torch.testing.assert_close(expected, manual)
    torch.testing.assert_close(layer(x), layer.out(expected.transpose(1, 2).reshape(1, 10, 8)))


def test_spectral_convolution_keeps_only_the_low_modes():
    torch.manual_seed(1)
    conv = SpectralConv2d(1, 2)
    x = torch.zeros(1, 1, 16, 16)
    x[0, 0] = torch.cos(2 * torch.pi * 5 * torch.arange(16) / 16)
    assert conv(x).abs().max() < 1e-6


def test_point_models_are_permutation_equivariant():
    torch.manual_seed(2)
    model = GalerkinTransformer(1, 1, width=16, layers=2)
    values, coords = torch.randn(1, 30, 1), torch.rand(1, 30, 2)
    perm = torch.randperm(30)
    torch.testing.assert_close(
        model.forward_points(values, coords)[:, perm], model.forward_points(values[:, perm], coords[:, perm])
    )


def test_fno_is_resolution_agnostic_on_band_limited_input():
    torch.manual_seed(3)
    model = FNO(1, 1, width=8, modes=4, layers=1)
    model.project = torch.nn.Identity()
    model.lift = torch.nn.Conv2d(3, 8, 1, bias=False)
    with torch.no_grad():
        model.lift.weight[:, 1:] = 0

    def field(n):
        x = torch.arange(n) / n
        return torch.sin(2 * torch.pi * x)[None, None, None, :].expand(1, 1, n, n)

    coarse, fine = model(field(16)), model(field(32))
    torch.testing.assert_close(fine[..., ::2, ::2], coarse, atol=1e-5, rtol=1e-4)
