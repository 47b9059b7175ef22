"""CCDB's data and baselines: the coloured benchmark's construction, group DRO's weights, scores, GPU probe."""

from __future__ import annotations

import numpy as np
import torch
import yaml

from repro.learning.smallnets import MLP
from repro.papers.ccdb import gpu_probe
from repro.papers.ccdb.data import build
from repro.papers.ccdb.methods import GroupDRO, gce_loss
from repro.papers.ccdb.scoring import scores, weight_shares


def test_coloured_benchmark_layout():
    rng = np.random.default_rng(0)
    images = rng.random((60, 4, 4)).astype(np.float32)
    labels = np.arange(60) % 10
    split = np.array(["train"] * 40 + ["val"] * 10 + ["test"] * 10)
    out = build(images, labels, split, rho=0.9, copies=3, seed=0)
    assert out["train/x"].shape == (120, 3, 4, 4) and out["val/y"].shape == (30,)
    np.testing.assert_array_equal(out["train/group"], out["train/y"] * 10 + out["train/bias"])
    # Every test image appears once in every colour: colour carries no label information at test time.
    assert out["test/x"].shape == (100, 3, 4, 4)
    assert all(np.sum(out["test/bias"] == c) == 10 for c in range(10))
    counts = np.bincount(out["test/group"], minlength=100)
    assert counts.min() == counts.max() == 1


def test_scores_and_weight_shares():
    y = np.array([0, 0, 1, 1])
    bias = np.array([0, 1, 1, 0])
    group = y * 2 + bias
    s = scores(np.array([0, 1, 1, 1]), y, bias, group, min_group=1)
    assert s["average"] == 0.75 and s["worst_group"] == 0.0 and s["conflicting"] == 0.5 and s["aligned"] == 1.0
    w = weight_shares(np.array([0.5, 2.0, 0.5, 1.0]), y, bias)
    assert w["mean_conflicting"] == 1.5 and w["mean_aligned"] == 0.5


def test_group_dro_moves_weight_to_the_worst_group():
    torch.manual_seed(0)
    model = GroupDRO(MLP(2, [4], 2), 2, step=1.0)
    x, y = torch.randn(8, 2), torch.tensor([0, 1] * 4)
    g = torch.tensor([0] * 6 + [1] * 2)
    with torch.no_grad():
        per = torch.nn.functional.cross_entropy(model(x), y, reduction="none")
    worst = int(torch.argmax(torch.stack([per[g == 0].mean(), per[g == 1].mean()])))
    model.loss(x, y, g)
    assert model.q[worst] > 0.5 and abs(float(model.q.sum()) - 1) < 1e-6


def test_gce_downweights_hard_samples():
    out = torch.tensor([[4.0, 0.0], [0.0, 4.0]])
    y = torch.tensor([0, 0])
    per = gce_loss(0.7)(out, y)
    ce = torch.nn.functional.cross_entropy(out, y, reduction="none")
    assert per[1] / per[0] < ce[1] / ce[0]  # the hard sample's loss grows less than under cross-entropy


def test_gpu_probe_builds_on_cpu_with_the_default_section():
    section = yaml.safe_load(open("config/config.yaml"))["papers"]["ccdb"]
    model, batch, loss = gpu_probe.build(section, torch.device("cpu"))
    loss(model, batch(2)).backward()
    assert model.head.weight.grad is not None
