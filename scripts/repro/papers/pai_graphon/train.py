"""Rule entry ``pai_graphon_train``: NTK-target alignment and a short training run of the pruned network.

On the synthetic task, for each criterion, density and seed: prune a fresh network of width ``ntk.width``
at initialisation (same scoring batch as the masks stage), measure the kernel-target alignment of its
empirical NTK on ``ntk.points`` test inputs, then train it (Adam, masked weights stay zero) and record the
test accuracy. The dense network is the baseline; ``ntk.seeds`` seeds give the alignment's interval. Batches
are drawn from (seed, step), so a rerun after an interruption repeats the runs exactly (they are short: no
checkpoint). Output: ``results/pai-graphon/train.json``.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.learning.training import epoch_seed
from repro.papers.pai_graphon import criteria, model, ntk
from repro.papers.pai_graphon.masks import scoring_batch
from repro.papers.pai_graphon.store import read_dataset
from repro.workflow.device import pick_device
from repro.workflow.io import write_json


def train_masked(weights, masks, X, y, steps: int, batch: int, lr: float, seed: int) -> list[torch.Tensor]:
    """Adam (written out: torch.optim's first step costs seconds of imports) on the masked weights; pruned
    entries never enter the forward pass, so their gradient is zero and they stay pruned."""
    params = [w.clone().requires_grad_(True) for w in weights]
    first = [torch.zeros_like(p) for p in params]
    second = [torch.zeros_like(p) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for step in range(1, steps + 1):
        gen = torch.Generator().manual_seed(epoch_seed(seed, step))  # a function of (seed, step) only
        idx = torch.randint(len(X), (batch,), generator=gen).to(X.device)
        grads = torch.autograd.grad(model.loss_fn(model.forward(params, X[idx], masks), y[idx]), params)
        with torch.no_grad():
            for p, g, m1, m2 in zip(params, grads, first, second):
                m1.mul_(beta1).add_(g, alpha=1 - beta1)
                m2.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                p -= lr * (m1 / (1 - beta1**step)) / ((m2 / (1 - beta2**step)).sqrt() + eps)
    return [p.detach() for p in params]


def accuracy(weights, masks, X, y) -> float:
    with torch.no_grad():
        logits = model.forward(weights, X, masks)
    pred = (logits[:, 0] > 0).long() if logits.shape[1] == 1 else logits.argmax(1)
    return float((pred == y).float().mean())


def main(job) -> None:
    s = job.params.settings
    cfg = s["ntk"]
    data = read_dataset(job.input.data)
    device = pick_device(job.params.device)
    test = np.flatnonzero(data["split"] == 1)
    train = np.flatnonzero(data["split"] == 0)
    X_tr, y_tr, X_te, y_te = (
        torch.from_numpy(a).to(device) for a in (data["X"][train], data["y"][train], data["X"][test], data["y"][test])
    )
    x_k, y_k = X_te[: cfg["points"]], 2 * y_te[: cfg["points"]] - 1
    majority = int(np.argmax(np.bincount(data["y"][train])))
    prior_accuracy = float(np.mean(data["y"][test] == majority))  # the learning check's trivial classifier
    runs = [("dense", 1.0)] + [(c, d) for c in s["criteria"] for d in cfg["densities"]]
    records = []
    for seed in cfg["seeds"]:
        idx = scoring_batch(data, s["batch_size"], seed)
        xb, yb = X_tr.new_tensor(data["X"][idx]), y_tr.new_tensor(data["y"][idx])
        weights = [w.to(device) for w in model.init_weights(64, cfg["width"], 1, seed)]
        for criterion, density in runs:
            if criterion == "dense":
                masks = [torch.ones_like(w, dtype=torch.bool) for w in weights]
            else:
                masks = criteria.prune(criterion, weights, xb, yb, density, seed)[0]
            K = ntk.ntk(weights, masks, x_k)
            trained = train_masked(weights, masks, X_tr, y_tr, cfg["steps"], cfg["train_batch"], cfg["lr"], seed)
            records.append(
                {
                    "criterion": criterion,
                    "density": density,
                    "seed": seed,
                    "alignment": ntk.alignment(K, y_k),
                    "centered_alignment": ntk.alignment(ntk.center(K), y_k),
                    "test_accuracy": accuracy(trained, masks, X_te, y_te),
                    "init_accuracy": accuracy(weights, masks, X_te, y_te),
                }
            )
    write_json(job.output.train, {"width": cfg["width"], "records": records, "prior_accuracy": prior_accuracy})
