"""NMNC's training step at paper scale for benchmarks/gpu.py: the section's MLP on flattened CIFAR-10-sized
images, updated by manifold noise correlation (the surrogate whose gradient is the NMNC update)."""

from __future__ import annotations

BATCH_SIZE = 128


def build(section: dict, device):
    """(model, batch(size), loss) of one NMNC update with the section's width, k, budget and sigma."""
    import numpy as np
    import torch

    from repro.learning.smallnets import MLP
    from repro.papers.nmnc.learning import NoiseCorrelationMLP

    source = section["source"]
    n_in = int(np.prod(source["size"])) * int(source["channels"])
    learn = section["learn"]
    net = MLP(n_in, section["model"]["hidden"], 10, activation=section["model"]["activation"])
    model = NoiseCorrelationMLP(net, learn["k"], learn["ema"]).to(device)

    def batch(size: int):
        return torch.randn(size, n_in, device=device), torch.randint(0, 10, (size,), device=device)

    def loss(m, b):
        return m.surrogate(*b, "nmnc", learn["n_perturb"], learn["sigma"], learn["refresh"])

    return model, batch, loss
