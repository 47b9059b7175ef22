"""Stage: DDPM and RealNVP stacks (one member per seed) on raw, isotropically perturbed and normal-space
perturbed data of every task; samples, per-epoch held-out losses and the flows' test NLL.

Perturbations are drawn afresh for every batch: normal-space noise N(z) eps, eps ~ N(0, sigma^2 I_{d-m}),
with N(z) the orthonormal basis of the normal space at each training point (QR of J(z)^T, computed once);
isotropic noise sigma N(0, I_d). A stack whose loss becomes non-finite is recorded as diverged (with the
epoch) instead of stopping the stage. Each stack keeps a checkpoint, so a rerun resumes.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import torch

from repro.learning.training import epoch_rng, fingerprint_of, train
from repro.papers.constrained_generative.manifolds import manifold
from repro.papers.constrained_generative.models import build
from repro.workflow.device import pick_device
from repro.workflow.io import InputError, atomic_path, read_npz

log = logging.getLogger(__name__)
VAL_SEED, SAMPLE_SEED, GAIN_SEED = 11, 22, 33
GAIN_POINTS = 500


def perturbed(x: torch.Tensor, basis: torch.Tensor | None, kind: str, sigma: float, gen=None) -> torch.Tensor:
    """x (M, B, d) perturbed by ``kind``; ``basis`` (M, B, d, d - m) holds the normal bases of x's points."""
    if kind == "raw":
        return x
    if kind == "isotropic":
        return x + sigma * torch.randn(x.shape, generator=gen, device=x.device)
    if kind == "normal":
        eps = sigma * torch.randn((*x.shape[:2], basis.shape[-1]), generator=gen, device=x.device)
        return x + torch.einsum("mbdk,mbk->mbd", basis, eps)
    raise ValueError(f"unknown perturbation {kind!r}")


def learning_rate(peak: float, epoch: int, epochs: int, schedule: str) -> float:
    """The rate of ``epoch``: ``peak`` throughout (constant) or cosine-decayed from ``peak`` towards 0."""
    if schedule == "constant":
        return peak
    if schedule == "cosine":
        return peak * 0.5 * (1.0 + math.cos(math.pi * epoch / epochs))
    raise ValueError(f"unknown learning-rate schedule {schedule!r}")


def fit_stack(task: dict, kind: str, perturbation: str, settings: dict, seed: int, code: list[str], ckpt: Path, device):
    """Train one stack; returns (model or None if it diverged, history, diverged epoch or -1, samples of the
    untrained initialisation: the learning checks' trivial generator)."""
    cfg = settings["train"]
    seeds = [int(s) for s in settings["seeds"]]
    sigma = float(settings["sigma"])
    x_train, x_test = task["x_train"], task["x_test"]
    geom = manifold(str(task["name"]))
    basis = torch.as_tensor(geom.normal_basis(x_train.astype(np.float64)), dtype=torch.float32, device=device)
    test_basis = torch.as_tensor(geom.normal_basis(x_test.astype(np.float64)), dtype=torch.float32, device=device)
    xt, xv = torch.as_tensor(x_train, device=device), torch.as_tensor(x_test, device=device)
    model = build(kind, seeds, geom.d, settings["models"][kind])
    init = model.sample(int(settings["samples"]), torch.Generator(device=device).manual_seed(SAMPLE_SEED)).cpu().numpy()
    batch, steps, m = int(cfg["batch"]), int(cfg["steps_per_epoch"]), len(seeds)
    epochs = int(settings["models"][kind].get("epochs", cfg["epochs"]))
    peak = float(settings["models"][kind].get("lr", cfg["lr"]))
    optimizer = torch.optim.Adam(model.parameters(), lr=peak)

    def batches(epoch: int) -> list[torch.Tensor]:
        for group in optimizer.param_groups:  # set per epoch, so a resumed run uses the same rates
            group["lr"] = learning_rate(peak, epoch, epochs, cfg.get("schedule", "constant"))
        rng = epoch_rng(seed, epoch)
        return list(torch.as_tensor(rng.integers(0, len(xt), size=(steps, m, batch))))

    def loss_fn(model, idx: torch.Tensor) -> torch.Tensor:
        return model.loss(perturbed(xt[idx], basis[idx], perturbation, sigma)).sum()

    def validate(model) -> torch.Tensor:
        gen = torch.Generator(device=device).manual_seed(VAL_SEED)
        x = xv.expand(m, -1, -1)
        return model.loss(perturbed(x, test_basis.expand(m, -1, -1, -1), perturbation, sigma, gen), gen)

    name = f"{task['name']}_{kind}_{perturbation}"
    try:
        result = train(
            model,
            loss_fn,
            batches,
            epochs=epochs,
            optimizer=optimizer,
            validate=validate,
            checkpoint=ckpt / f"{name}.pt",
            checkpoint_every=int(cfg["checkpoint_every"]),
            fingerprint=fingerprint_of([settings, name, seed], code),
            desc=f"constrained-generative {name}",
            seed=seed,
            device=device,
        )
    except FloatingPointError as err:
        log.warning("%s diverged: %s", name, err)
        return None, [], int(str(err).rsplit(" ", 1)[-1]), init
    history = np.array([r["val_members"] for r in result.history], dtype=float)
    return model, history, -1, init


def normal_gain(model, task: dict, members: int, device) -> np.ndarray:
    """Per member, the trained DDPM's noise-predictor gain across the manifold at the smallest noise level,
    on held-out points (NaN for a diverged stack)."""
    if model is None:
        return np.full(members, np.nan)
    geom = manifold(str(task["name"]))
    x0 = task["x_test"][:GAIN_POINTS].astype(np.float64)
    normals = geom.normal_basis(x0)[..., 0]
    as_tensor = lambda a: torch.as_tensor(a, dtype=torch.float32, device=device)  # noqa: E731
    gen = torch.Generator(device=device).manual_seed(GAIN_SEED)
    return model.normal_gain(as_tensor(x0), as_tensor(normals), gen).cpu().numpy().astype(float)


def main(job) -> None:
    settings = job.params.settings
    torch.set_num_threads(max(1, int(job.threads)))
    seed, n = int(job.params.seed), int(settings["samples"])
    device = pick_device(job.params.device)
    out = {}
    for name in settings["tasks"]:
        path = getattr(job.input, name)
        task = read_npz(path)
        if "x_train" not in task or "x_test" not in task:
            raise InputError(path, "needs x_train and x_test")
        for kind in settings["model_kinds"]:
            for perturbation in settings["perturbations"]:
                key = f"{name}__{kind}__{perturbation}"
                model, history, diverged, init = fit_stack(
                    task, kind, perturbation, settings, seed, list(job.input.code), Path(job.params.checkpoints), device
                )
                m, d = len(settings["seeds"]), int(task["d"])
                if model is None:
                    samples, test_loss = np.full((m, n, d), np.nan), np.full(m, np.nan)
                else:
                    samples = model.sample(n, torch.Generator(device=device).manual_seed(SAMPLE_SEED)).cpu().numpy()
                    test_loss = history[-1] if len(history) else np.full(m, np.nan)
                out[f"{key}__samples"] = samples.astype(np.float32)
                out[f"{key}__init_samples"] = init.astype(np.float32)
                if kind == "ddpm":
                    out[f"{key}__normal_gain"] = normal_gain(model, task, m, device)
                out[f"{key}__history"] = np.asarray(history, dtype=float).reshape(-1, m)
                out[f"{key}__diverged"] = np.int64(diverged)
                out[f"{key}__test_loss"] = np.asarray(test_loss, dtype=float)
    with atomic_path(job.output.runs) as tmp:
        np.savez(tmp, **out)
    for checkpoint in Path(job.params.checkpoints).glob("*.pt"):
        checkpoint.unlink()  # the output is written: a rerun must not resume from a finished run
