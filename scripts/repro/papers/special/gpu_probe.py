"""GPU probe: SPECIAL's federated MLP at its configured size, one client's local-SGD loss on a synthetic batch."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from repro.learning.smallnets import MLP

BATCH_SIZE = 256
DOMAINNET_CLASSES = 345
SIDE = {"mnist": 28, "mnist_5k": 28, "sklearn_digits": 8, "mfeat": 16}


def build(section: dict, device):
    if section.get("source") == "domainnet":
        in_dim, classes = 3 * section["image_size"][0] * section["image_size"][1], DOMAINNET_CLASSES
    else:
        side = SIDE.get(section.get("source"), 28)
        in_dim, classes = side * (15 if section.get("source") == "mfeat" else side), 10
    model = MLP(in_dim, section["hidden"], classes).to(device)

    def make_batch(size: int):
        return torch.rand(size, in_dim, device=device), torch.randint(0, classes, (size,), device=device)

    def loss(m, batch):
        x, y = batch
        return F.cross_entropy(m(x), y)

    return model, make_batch, loss
