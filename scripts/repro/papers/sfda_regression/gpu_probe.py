"""GPU probe: DDG-SFDA's regressor (MLP features, point head, K-bin auxiliary head) at its configured size,
one adaptation loss (weighted L1 to pseudo-labels plus the KL to instance histograms) on a synthetic batch."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from repro.papers.sfda_regression.density import soft_bins
from repro.papers.sfda_regression.train import make_model

BATCH_SIZE = 256
SIDE = {"mnist": (28, 28), "mnist_5k": (28, 28), "sklearn_digits": (8, 8), "mfeat": (16, 15)}


def build(section: dict, device):
    h, w = SIDE.get(section.get("source"), (28, 28))
    model = make_model(h * w, section, 0).to(device)
    bins, aux = section["adapt"]["bins"], section["adapt"]["aux_weight"]

    def make_batch(size: int):
        return torch.rand(size, h * w, device=device), torch.rand(size, device=device)

    def loss(m, batch):
        x, y = batch
        pred, logits, _ = m(x)
        return F.l1_loss(pred, y) + aux * F.kl_div(F.log_softmax(logits, 1), soft_bins(y, bins), reduction="batchmean")

    return model, make_batch, loss
