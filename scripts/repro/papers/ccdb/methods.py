"""The classifiers CCDB is compared with, all on the same MLP and training loop (repro.learning.smallnets.fit):
ERM; CCDB (bias-capturing model -> balancing weights -> weighted ERM); JTT (up-weight the errors of an
early ERM model); and, with group labels (oracles), group-balanced reweighting and online group DRO."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from repro.learning.smallnets import MLP, fit, predict
from repro.learning.training import epoch_rng, train
from repro.metrics.learning import accuracy
from repro.papers.ccdb.weights import balance_weights


def make_model(n_in: int, s: dict, seed: int) -> MLP:
    torch.manual_seed(seed)
    return MLP(n_in, s["model"]["hidden"], 10)


def gce_loss(q: float):
    """Generalised cross-entropy (1 - p_y^q) / q: emphasises easy samples, so the model learns the bias first."""

    def loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        p = F.softmax(out, dim=1).gather(1, y[:, None]).squeeze(1).clamp_min(1e-8)
        return (1 - p**q) / q

    return loss


def _fit(model, x, y, s: dict, seed: int, val, weights=None, desc="fit", device=None):
    t = s["train"]
    xv, yv = val

    def validate(net) -> float:
        return 1.0 - accuracy(predict(net, xv), yv)

    fit(
        model,
        x,
        y,
        loss="ce",
        epochs=t["epochs"],
        batch_size=t["batch_size"],
        lr=t["lr"],
        seed=seed,
        weights=weights,
        validate=validate,
        desc=desc,
        device=device,
    )
    return model


def plain_fit(model, x, y, s: dict, loss, epochs: int, seed: int, desc: str, device) -> None:
    """A short fit without model selection (bias-capturing and identification models), left on the CPU."""
    t = s["train"]
    fit(
        model,
        x,
        y,
        loss=loss,
        epochs=epochs,
        batch_size=t["batch_size"],
        lr=t["lr"],
        seed=seed,
        desc=desc,
        device=device,
    )
    model.cpu()


def erm(x, y, s, seed, val, device=None, **_):
    return _fit(make_model(x.shape[1], s, seed), x, y, s, seed, val, desc=f"erm seed {seed}", device=device), None


def bias_features(x, y, s, seed, device=None) -> np.ndarray:
    """Stage 1: features of a bias-capturing model (GCE, few epochs), PCA-reduced and standardised."""
    c = s["ccdb"]
    biased = make_model(x.shape[1], s, seed + 1000)
    plain_fit(biased, x, y, s, gce_loss(c["gce_q"]), c["bias_epochs"], seed + 1000, f"ccdb bias model {seed}", device)
    with torch.no_grad():
        feats = biased.features(torch.as_tensor(x)).numpy().astype(np.float64)
    feats -= feats.mean(0)
    _, _, vt = np.linalg.svd(feats, full_matrices=False)
    z = feats @ vt[: c["dim"]].T
    return z / z.std(0).clip(1e-8)


def ccdb(x, y, s, seed, val, device=None, **_):
    b = bias_features(x, y, s, seed, device)
    w, _ = balance_weights(b, y, 10, s["ccdb"], seed)
    weights = w.numpy().astype(np.float64)
    model = _fit(
        make_model(x.shape[1], s, seed), x, y, s, seed, val, weights=weights, desc=f"ccdb seed {seed}", device=device
    )
    return model, weights


def jtt(x, y, s, seed, val, device=None, **_):
    c = s["jtt"]
    ident = make_model(x.shape[1], s, seed + 2000)
    plain_fit(ident, x, y, s, "ce", c["id_epochs"], seed + 2000, f"jtt identification {seed}", device)
    errors = predict(ident, x).argmax(1) != y
    weights = np.where(errors, float(c["lambda_up"]), 1.0)
    model = _fit(
        make_model(x.shape[1], s, seed), x, y, s, seed, val, weights=weights, desc=f"jtt seed {seed}", device=device
    )
    return model, weights / weights.mean()


def group_balanced(x, y, s, seed, val, group, device=None, **_):
    counts = np.bincount(group)
    weights = 1.0 / counts[group]
    model = _fit(
        make_model(x.shape[1], s, seed),
        x,
        y,
        s,
        seed,
        val,
        weights=weights,
        desc=f"group-balanced {seed}",
        device=device,
    )
    return model, weights / weights.mean()


class GroupDRO(nn.Module):
    """Online group DRO (Sagawa et al. 2020): exponentiated-gradient weights q over groups (a buffer)."""

    def __init__(self, net: MLP, n_groups: int, step: float):
        super().__init__()
        self.net, self.step = net, float(step)
        self.register_buffer("q", torch.full((n_groups,), 1.0 / n_groups))

    def forward(self, x):
        return self.net(x)

    def loss(self, x, y, g) -> torch.Tensor:
        per = F.cross_entropy(self.net(x), y, reduction="none")
        sums = torch.zeros_like(self.q).index_add(0, g, per)
        counts = torch.zeros_like(self.q).index_add(0, g, torch.ones_like(per))
        present = counts > 0
        means = torch.where(present, sums / counts.clamp_min(1), torch.zeros_like(sums))
        with torch.no_grad():
            self.q.mul_(torch.exp(self.step * means.detach() * present))
            self.q.div_(self.q.sum())
        return (self.q * means).sum()


def group_dro(x, y, s, seed, val, group, device=None, **_):
    t = s["train"]
    net = make_model(x.shape[1], s, seed)
    model = GroupDRO(net, int(group.max()) + 1, s["group_dro"]["step"])
    xt, yt, gt = torch.as_tensor(x), torch.as_tensor(y), torch.as_tensor(group)
    xv, yv = val

    def batches(epoch):
        order = torch.as_tensor(epoch_rng(seed, epoch).permutation(len(xt)))
        for i in range(0, len(xt), t["batch_size"]):
            idx = order[i : i + t["batch_size"]]
            yield xt[idx], yt[idx], gt[idx]

    train(
        model,
        lambda m, b: m.loss(*b),
        batches,
        epochs=t["epochs"],
        optimizer=torch.optim.Adam(net.parameters(), lr=t["lr"]),
        validate=lambda m: 1.0 - accuracy(predict(m, xv), yv),
        seed=seed,
        desc=f"group DRO seed {seed}",
        device=device,
    )
    return model, None


METHODS = {"erm": erm, "ccdb": ccdb, "jtt": jtt, "group_balanced": group_balanced, "group_dro": group_dro}
ORACLES = ("group_balanced", "group_dro")
