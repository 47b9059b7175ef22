"""Networks: IRFC bias, sampling shapes, generation chaining, and a short training that learns."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.papers.biodynaspec.generate import generate
from repro.papers.biodynaspec.models import IRFCBias, SlotDiffusion, WindowFlow
from repro.papers.biodynaspec.registry import build_network

SETTINGS = {
    "window": 8,
    "d_model": 32,
    "layers": 1,
    "heads": 2,
    "irfc_kernels": 8,
    "diffusion_steps": 10,
    "flow_steps": 5,
}


def test_irfc_lookup_matches_exact_gaussian_mixture():
    torch.manual_seed(0)
    bias = IRFCBias(heads=3, kernels=8)
    dist = torch.rand(2, 17, 17) * 40
    exact = bias.kernel(dist).permute(1, 0, 2, 3)
    assert bias(dist).shape == (2, 3, 17, 17)
    # the 0.1 Å grid moves each distance by at most 0.05 Å
    slope = bias.kernel(torch.linspace(0, 40, 4001)).diff(dim=1).abs().max() / 0.01
    assert (bias(dist) - exact).abs().max() <= 0.05 * slope + 1e-6


def test_irfc_bias_depends_on_distance_only():
    bias = IRFCBias(heads=2)
    pos = torch.randn(1, 10, 3) * 10
    rot = torch.linalg.qr(torch.randn(3, 3))[0]
    d1, d2 = torch.cdist(pos, pos), torch.cdist(pos @ rot + 5, pos @ rot + 5)
    torch.testing.assert_close(bias(d1), bias(d2), atol=1e-3, rtol=0)


@pytest.mark.parametrize("name", ["biodynaspec", "time_ar", "flow"])
def test_sample_shapes(name):
    net = build_network(name, SETTINGS)
    anchor, types = torch.randn(2, 6, 3) * 5, torch.zeros(2, 6, dtype=torch.long)
    out = net.sample(anchor, types, torch.Generator().manual_seed(0))
    expected = (2, 5, 6, 6) if name == "biodynaspec" else (2, 8, 6, 3)
    assert tuple(out.shape) == expected


def test_generation_chains_windows_and_static_copies_frame0():
    start = np.random.default_rng(0).normal(size=(6, 3)) * 5
    types = np.zeros(6, dtype=np.int64)
    static = generate("static", None, None, start, types, 10, 8, 2, 0)
    assert static.shape == (2, 11, 6, 3) and np.all(static == start)
    net = build_network("biodynaspec", SETTINGS)
    trajs = generate("biodynaspec", net, np.ones(5), start, types, 10, 8, 2, 0)
    assert trajs.shape == (2, 11, 6, 3)
    np.testing.assert_allclose(trajs[:, 0], np.broadcast_to(start, (2, 6, 3)))


@pytest.mark.parametrize("cls", [SlotDiffusion, WindowFlow])
def test_short_training_reduces_the_loss(cls):
    torch.manual_seed(0)
    kwargs = dict(d_model=32, layers=1, heads=2)
    net = cls(4, 3, **kwargs, **({"diffusion_steps": 10} if cls is SlotDiffusion else {"flow_steps": 5}))
    anchor = torch.randn(16, 6, 3) * 5
    types = torch.zeros(16, 6, dtype=torch.long)
    slots = 0.3 * torch.randn(16, 4, 6, 3) + torch.linspace(-1, 1, 4)[None, :, None, None]
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    torch.manual_seed(1)
    before = float(np.mean([net.loss(anchor, types, slots).item() for _ in range(20)]))
    for _ in range(150):
        opt.zero_grad()
        net.loss(anchor, types, slots).backward()
        opt.step()
    torch.manual_seed(1)
    after = float(np.mean([net.loss(anchor, types, slots).item() for _ in range(20)]))
    assert after < 0.8 * before
