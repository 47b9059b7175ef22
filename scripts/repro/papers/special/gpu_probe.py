"""GPU probe: SPECIAL's federated MLP at its configured size, one client's local-SGD loss on a synthetic batch."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from repro.smallnets import MLP

BATCH_SIZE = 256
SIDE = {"mnist": 28, "mnist_5k": 28, "sklearn_digits": 8, "mfeat": 16}


def build(section: dict, device):
    side = SIDE.get(section.get("source"), 28)
    in_dim = side * (15 if section.get("source") == "mfeat" else side)
    model = MLP(in_dim, section["hidden"], 10).to(device)

    def make_batch(size: int):
        return torch.rand(size, in_dim, device=device), torch.randint(0, 10, (size,), device=device)

    def loss(m, batch):
        x, y = batch
        return F.cross_entropy(m(x), y)

    return model, make_batch, loss
