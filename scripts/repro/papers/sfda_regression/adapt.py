"""Source training and the source-free adaptation methods, each a run of the shared training loop.

Methods: ``source_only`` (no adaptation), ``self_training`` (naive pseudo-labelling: EMA teacher labels, student
on weak augmentations, every sample weighted alike), ``feature_alignment`` (the target feature mean and variance
pulled onto the stored source statistics, head frozen; source-free feature restoration), ``tasfar`` (TASFAR-style,
He et al. 2023: the source model's uncertainty on augmentations picks its confident target predictions, whose
histogram is the target label density map; each sample's pseudo-label is the posterior mean of that map times a
Gaussian around its prediction, weighted by the posterior's precision, fixed once and fitted), ``ddg`` (DDG-SFDA:
density-refined, entropy-weighted pseudo-labels plus the auxiliary discretized-distribution head), its
ablations ``ddg_no_aux`` and ``ddg_no_weight``, and ``oracle`` (fine-tuned on target labels, reference only).
Adaptation keeps the last epoch's weights (fixed epochs: no target label may select a model).
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from repro.learning.training import epoch_rng, train
from repro.papers.sfda_regression.density import bin_centres, instance_histograms, refine, soft_bins
from repro.papers.sfda_regression.model import Regressor, TeacherStudent

METHODS = (
    "source_only",
    "self_training",
    "feature_alignment",
    "tasfar",
    "ddg",
    "ddg_no_aux",
    "ddg_no_weight",
    "oracle",
)


@dataclass
class Diagnostics:
    """The last epoch's histograms, refined labels and weights on the adaptation set (DDG variants only)."""

    histograms: torch.Tensor | None = None
    labels: torch.Tensor | None = None
    weights: torch.Tensor | None = None
    history: list[dict] = field(default_factory=list)


def augment(x: torch.Tensor, noise: float, jitter: float) -> torch.Tensor:
    """Weak augmentation: intensity scaled by U(1 - jitter, 1 + jitter) per sample plus Gaussian noise."""
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    scale = 1.0 + jitter * (2 * torch.rand(shape) - 1)
    return x * scale + noise * torch.randn_like(x)


def _order(n: int, batch_size: int, seed: int, epoch: int) -> list[torch.Tensor]:
    order = torch.as_tensor(epoch_rng(seed, epoch).permutation(n))
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def train_source(
    model: Regressor,
    x: torch.Tensor,
    y: torch.Tensor,
    settings: dict,
    seed: int,
    checkpoint: str | os.PathLike | None = None,
    fingerprint: str = "",
) -> None:
    """Supervised source training: L1 on the point head plus the auxiliary head on soft-binned true targets."""
    bins, aux_weight = settings["bins"], settings["aux_weight"]

    def loss(m: Regressor, batch) -> torch.Tensor:
        xb, yb = batch
        pred, logits, _ = m(xb)
        return F.l1_loss(pred, yb) + aux_weight * F.kl_div(
            F.log_softmax(logits, 1), soft_bins(yb, bins), reduction="batchmean"
        )

    def batches(epoch: int):
        return [(x[i], y[i]) for i in _order(len(y), settings["batch_size"], seed, epoch)]

    optimizer = torch.optim.Adam(model.parameters(), lr=settings["source_lr"])
    train(
        model,
        loss,
        batches,
        epochs=settings["source_epochs"],
        optimizer=optimizer,
        checkpoint=checkpoint,
        checkpoint_every=settings["source_epochs"],
        fingerprint=fingerprint,
        desc="source",
        seed=seed,
    )


def feature_statistics(model: Regressor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-dimension mean and variance of the source features: all a source-free aligner may keep."""
    with torch.no_grad():
        z = model(x)[2]
    return z.mean(0), z.var(0)


def tasfar_labels(model: Regressor, x: torch.Tensor, cfg: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """TASFAR-style pseudo-labels and weights from the source model alone (computed once, before adapting).

    Uncertainty: the spread of the predictions over weak augmentations (at least half a bin). The samples at or
    below the median uncertainty are the confident ones; the soft histogram of their predictions is the label
    density map. Each sample's posterior over the bins is the map times a Gaussian around its prediction with
    its uncertainty; the pseudo-label is the posterior mean, the weight the posterior's precision (mean 1)."""
    bins = cfg["bins"]
    centres = bin_centres(bins)
    with torch.no_grad():
        pred = model(x)[0]
        aug = torch.stack(
            [model(augment(x, cfg["aug_noise"], cfg["aug_jitter"]))[0] for _ in range(cfg["augmentations"])]
        )
    sigma = aug.std(0).clamp_min(0.5 / bins)
    confident = sigma <= sigma.median()
    density = soft_bins(pred[confident].clamp(0.0, 1.0), bins).mean(0)
    log_post = -((centres - pred[:, None]) ** 2) / (2 * sigma[:, None] ** 2) + torch.log(density.clamp_min(1e-12))
    post = torch.softmax(log_post, dim=1)
    label = post @ centres
    var = (post @ centres**2 - label**2).clamp_min(1e-8)
    weight = 1.0 / var
    return label, weight / weight.mean()


def adapt(
    source: Regressor,
    method: str,
    x: torch.Tensor,
    settings: dict,
    seed: int,
    source_stats: tuple[torch.Tensor, torch.Tensor],
    y: torch.Tensor | None = None,
    checkpoint: str | os.PathLike | None = None,
    fingerprint: str = "",
) -> tuple[Regressor, Diagnostics]:
    """Adapt a copy of ``source`` to the unlabelled target inputs ``x`` (``y`` only for the oracle)."""
    if method not in METHODS:
        raise ValueError(f"unknown adaptation method {method!r}; expected one of {METHODS}")
    diag = Diagnostics()
    student = copy.deepcopy(source)
    if method == "source_only":
        return student, diag
    pair = TeacherStudent(student, copy.deepcopy(source))
    cfg = settings
    bins = cfg["bins"]
    aux = 0.0 if method == "ddg_no_aux" else cfg["aux_weight"]
    params = list(student.parameters())
    if method == "feature_alignment":
        params = list(student.features.parameters())
        mu_s, var_s = source_stats
    if method == "tasfar":
        torch.manual_seed(seed)
        fixed_label, fixed_weight = tasfar_labels(source, x, cfg)

    def pseudo_labels() -> tuple[torch.Tensor, ...]:
        teacher = pair.teacher
        with torch.no_grad():
            pred, _, z = teacher(x)
            if method == "self_training":
                return pred, torch.ones_like(pred), soft_bins(pred.clamp(0, 1), bins)
            aug = torch.stack(
                [teacher(augment(x, cfg["aug_noise"], cfg["aug_jitter"]))[0] for _ in range(cfg["augmentations"])]
            )
            hist = instance_histograms(pred, aug, z, bins, cfg["neighbours"])
            label, weight = refine(pred, hist, cfg["mix"])
            if method == "ddg_no_weight":
                weight = torch.ones_like(weight)
        diag.histograms, diag.labels, diag.weights = hist, label, weight
        return label, weight, hist

    def batches(epoch: int):
        idx = _order(len(x), cfg["batch_size"], seed, epoch)
        if method == "oracle":
            return [(x[i], y[i]) for i in idx]
        if method == "feature_alignment":
            return [(x[i],) for i in idx]
        if method == "tasfar":
            return [(x[i], fixed_label[i], fixed_weight[i]) for i in idx]
        label, weight, hist = pseudo_labels()
        return [(x[i], label[i], weight[i], hist[i]) for i in idx]

    def loss(m: TeacherStudent, batch) -> torch.Tensor:
        if method == "oracle":
            return F.l1_loss(m.student(batch[0])[0], batch[1])
        if method == "feature_alignment":
            z = m.student(batch[0])[2]
            return ((z.mean(0) - mu_s) ** 2).mean() + ((z.var(0) - var_s) ** 2).mean()
        if method == "tasfar":
            xb, label, weight = batch
            pred = m.student(augment(xb, cfg["aug_noise"], cfg["aug_jitter"]))[0]
            return (weight * (pred - label).abs()).sum() / weight.sum().clamp_min(1e-8)
        m.ema(cfg["ema"])
        xb, label, weight, hist = batch
        pred, logits, _ = m.student(augment(xb, cfg["aug_noise"], cfg["aug_jitter"]))
        fit = (weight * (pred - label).abs()).sum() / weight.sum().clamp_min(1e-8)
        if aux == 0.0:
            return fit
        return fit + aux * F.kl_div(F.log_softmax(logits, 1), hist, reduction="batchmean")

    optimizer = torch.optim.Adam(params, lr=cfg["adapt_lr"])
    result = train(
        pair,
        loss,
        batches,
        epochs=cfg["adapt_epochs"],
        optimizer=optimizer,
        keep_last=True,
        checkpoint=checkpoint,
        checkpoint_every=cfg["adapt_epochs"],
        fingerprint=fingerprint,
        desc=f"adapt {method}",
        seed=seed,
    )
    diag.history = result.history
    if method.startswith("ddg"):
        pseudo_labels()
    return pair.student, diag
