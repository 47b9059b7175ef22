"""The instance-dependent discretized density of DDG-SFDA: soft histograms over K bins of the target range.

Targets are normalised to [0, 1] with the source range and split into K equal bins with centres c_k. A value
spreads over the bins with a Gaussian kernel one bin wide (smooth histograms). A target sample's histogram
pools the teacher's predictions on its k nearest target neighbours (cosine distance in feature space) and on
weak augmentations of itself; its refined pseudo-label mixes the point prediction with the histogram's mean,
and its weight is one minus the histogram's normalised entropy (a peaked histogram is a confident one).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def bin_centres(bins: int) -> torch.Tensor:
    return (torch.arange(bins, dtype=torch.float32) + 0.5) / bins


def soft_bins(values: torch.Tensor, bins: int, width: float = 1.0) -> torch.Tensor:
    """(..., K) histogram of each value: Gaussian kernel of ``width`` bins around it, normalised to sum 1."""
    centres = bin_centres(bins).to(values.dtype)
    sigma = width / bins
    logits = -((values.unsqueeze(-1) - centres) ** 2) / (2 * sigma**2)
    return torch.softmax(logits, dim=-1)


def neighbours(features: torch.Tensor, k: int) -> torch.Tensor:
    """(N, k) indices of each row's k nearest other rows by cosine similarity."""
    z = F.normalize(features, dim=1)
    sim = z @ z.T
    sim.fill_diagonal_(-float("inf"))
    return sim.topk(min(k, len(z) - 1), dim=1).indices


def instance_histograms(
    predictions: torch.Tensor, augmented: torch.Tensor, features: torch.Tensor, bins: int, k: int
) -> torch.Tensor:
    """(N, K) density of each sample from its neighbours' predictions and its own augmented predictions.

    ``predictions`` (N,) on clean inputs, ``augmented`` (A, N) on A weak augmentations, ``features`` (N, D).
    """
    pooled = torch.cat([predictions[neighbours(features, k)], augmented.T], dim=1)
    return soft_bins(pooled.clamp(0.0, 1.0), bins).mean(dim=1)


def refine(predictions: torch.Tensor, histograms: torch.Tensor, mix: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Refined pseudo-labels (convex mix of prediction and histogram mean, within the bin range) and weights."""
    bins = histograms.shape[1]
    mean = histograms @ bin_centres(bins).to(histograms.dtype)
    centres = bin_centres(bins)
    point = predictions.clamp(float(centres[0]), float(centres[-1]))
    label = mix * point + (1.0 - mix) * mean
    entropy = -(histograms * torch.log(histograms.clamp_min(1e-12))).sum(1)
    return label, 1.0 - entropy / math.log(bins)
