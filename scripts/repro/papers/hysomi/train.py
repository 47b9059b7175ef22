"""Train methods (one per job, or all of them) on one complexity level, for every (training-set size, seed) member at once.

Methods: ``constrained`` (hybrid, lambda_c from config), ``unconstrained`` (hybrid, lambda_c = 0),
``global`` (B1: one parameter vector, same loss), ``blackbox`` (B4: traits -> observed trajectories),
``calibrated`` (B3 and B5: one parameter vector per training sample, same loss; test samples then get
the parameters of their nearest training sample, B3, or of a ridge regression on traits, B5).
Members with a smaller training size use a prefix of one fixed permutation of the train split, so
the seeds differ only in initialisation and their spread measures equifinality. Training is full
batch and seeded per epoch, so a run resumed from its checkpoint equals an uninterrupted one.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import torch

from repro.learning.training import fingerprint_of, seed_everything, train
from repro.papers.hysomi import adjoint
from repro.papers.hysomi.constraints import load_ratios, total_penalty
from repro.papers.hysomi.dataset import LevelData, Split, load_level, take
from repro.papers.hysomi.models import (
    BlackBox,
    GlobalParameters,
    ParameterHead,
    PerSampleParameters,
    transfer_parameters,
)
from repro.papers.hysomi.soil_model import STATES, Bounds
from repro.workflow.device import pick_device
from repro.workflow.io import atomic_path

log = logging.getLogger(__name__)
METHODS = ("constrained", "unconstrained", "global", "blackbox", "calibrated")
CHECKPOINT_EVERY = 25
TWO_STEP_RIDGE = 1.0  # ridge penalty of B5's regression of calibrated logits on z-scored traits


def member_weights(n_train: list[int], n_available: int, order: np.ndarray) -> torch.Tensor:
    """(M, N) 0/1 mask: member m trains on the first n_train[m] samples of ``order``."""
    if max(n_train) > n_available:
        raise ValueError(f"n_train {max(n_train)} exceeds the {n_available} training samples available")
    w = torch.zeros(len(n_train), n_available, dtype=torch.float64)
    for m, n in enumerate(n_train):
        w[m, torch.as_tensor(order[:n])] = 1.0
    return w


def build_model(
    method: str, seeds: list[int], data: LevelData, hidden: int, bounds: Bounds, n_train: int
) -> torch.nn.Module:
    """The network of ``method`` for every member; ``n_train`` samples get per-sample parameters (calibrated)."""
    d_in = len(data.trait_names)
    if method in ("constrained", "unconstrained"):
        return ParameterHead(seeds, d_in, hidden, bounds)
    if method == "global":
        return GlobalParameters(seeds, bounds)
    if method == "blackbox":
        return BlackBox(seeds, d_in, hidden, len(data.times), len(STATES))
    if method == "calibrated":
        return PerSampleParameters(seeds, n_train, bounds)
    raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")


def predict(model, method: str, split: Split, data: LevelData, dt: float, bounds: Bounds, theta=None):
    """Parameters (M, N, 8) (NaN for the black box) and trajectories (M, N, T, 5) of a split.

    ``theta`` (M, N, 8) replaces the model's parameters (the calibrated baselines on unseen samples).
    """
    if method == "blackbox":
        traj = model(split.traits) * data.state_scale
        unobserved = torch.tensor([s not in data.observed_states for s in STATES])
        traj = traj.masked_fill(unobserved, float("nan"))
        theta = torch.full((*traj.shape[:2], len(bounds.lo)), float("nan"), dtype=torch.float64)
        return theta, traj
    theta = model(split.traits) if theta is None else theta
    x0 = split.x0.unsqueeze(0).expand(theta.shape[0], -1, -1)
    return theta, adjoint.simulate(x0, theta, data.times, dt, bounds.f_s)


def data_loss(traj: torch.Tensor, split: Split, scale: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Per-member mean squared standardised error on observed entries of the weighted samples, (M,)."""
    obs = split.observed.to(traj.dtype)
    sq = torch.nan_to_num((traj - split.value) / scale) ** 2 * obs
    per_sample = sq.sum((-1, -2))
    count = obs.sum((-1, -2))
    return (per_sample * weight).sum(-1) / (count * weight).sum(-1)


def main(job) -> None:
    """Train every method of ``params.methods`` (one, or all of them) on the job's complexity level.

    The level's data and constraints are read once for all of its methods.
    """
    unknown = [m for m in job.params.methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; expected some of {METHODS}")
    level = job.wildcards.complexity
    bounds = Bounds.from_yaml(job.input.constraints)
    ratios = load_ratios(job.input.constraints)
    data = load_level(job.input.traits, job.input.observations, level)
    for method in job.params.methods:
        train_method(job, method, level, data, bounds, ratios)


def train_method(job, method: str, level: str, data: LevelData, bounds: Bounds, ratios) -> None:
    """One method on one level, for every member; written to the job's ``run_<method>`` output."""
    settings = job.params.settings
    device = pick_device(job.params.device)
    log.info("training %s on %s (device %s; the ODE runs in float64 on the CPU)", method, level, device)
    train_split, val_split, test_split = (data.splits[s] for s in ("train", "val", "test"))
    members = [(n, s) for n in settings["n_train"] for s in settings["seeds"]]
    order = np.random.default_rng(job.params.seed).permutation(len(train_split.ids))
    sizes = [n for n, _ in members]
    weight = member_weights(sizes, len(train_split.ids), order)
    # Only the samples some member trains on are simulated (the rest have weight 0 for every member).
    used = order[: int(np.max(sizes))]
    train_split, weight = take(train_split, used), weight[:, torch.as_tensor(used)]
    seed_everything(job.params.seed)
    model = build_model(method, [1000 * n + s for n, s in members], data, settings["hidden"], bounds, len(used))
    lam = settings["lambda_c"] if method in ("constrained", "global", "calibrated") else 0.0
    dt = settings["dt"]
    val_weight = torch.ones(len(members), len(val_split.ids), dtype=torch.float64)

    def loss_fn(model, _batch) -> torch.Tensor:
        theta, traj = predict(model, method, train_split, data, dt, bounds)
        loss = data_loss(traj, train_split, data.state_scale, weight)
        if lam > 0:
            loss = loss + lam * total_penalty(traj, theta, data.state_scale, weight, ratios)
        return loss.sum()

    def validate(model) -> torch.Tensor:
        _, traj = predict(model, method, val_split, data, dt, bounds)
        return data_loss(traj, val_split, data.state_scale, val_weight)

    optimizer = torch.optim.Adam(model.parameters(), lr=settings["lr"])
    checkpoint = Path(job.params.checkpoints) / level / f"{method}.pt"
    start = time.perf_counter()
    result = train(
        model,
        loss_fn,
        lambda epoch: [None],
        epochs=settings["epochs"],
        optimizer=optimizer,
        # The calibration fits each training sample alone: it stops on its own loss, not on unseen samples.
        validate=None if method == "calibrated" else validate,
        patience=settings["patience"],
        checkpoint=checkpoint,
        checkpoint_every=CHECKPOINT_EVERY,
        fingerprint=fingerprint_of([settings, method, level, job.params.seed], job.input.code),
        desc=f"hysomi {level} {method}",
        seed=job.params.seed,
    )
    extra = {}
    with torch.no_grad():
        if method == "calibrated":
            for how in ("nearest", "regression"):
                logits = transfer_parameters(
                    model.logits, train_split.traits, weight, test_split.traits, how, TWO_STEP_RIDGE
                )
                extra[f"theta_{how}"], extra[f"traj_{how}"] = (
                    a.numpy()
                    for a in predict(
                        model, method, test_split, data, dt, bounds, bounds.from_unit(torch.sigmoid(logits))
                    )
                )
            extra["theta_calibrated"] = model(train_split.traits).numpy()
            theta, traj = (torch.from_numpy(extra[f"{k}_nearest"]) for k in ("theta", "traj"))
        else:
            theta, traj = predict(model, method, test_split, data, dt, bounds)
    with atomic_path(getattr(job.output, f"run_{method}")) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(
                fh,
                method=method,
                complexity=level,
                n_train=np.array([n for n, _ in members]),
                seed=np.array([s for _, s in members]),
                test_ids=np.array(test_split.ids),
                times=np.array(data.times),
                theta=theta.numpy(),
                traj=traj.numpy(),
                loss=np.array([h["loss"] for h in result.history]),
                val=np.array([h.get("val", np.nan) for h in result.history]),
                best_epoch=np.array(result.best_epoch),
                train_seconds=time.perf_counter() - start,
                **extra,
            )
    checkpoint.unlink(missing_ok=True)
    log.info("best epochs %s", result.best_epoch)
