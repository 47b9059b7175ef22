"""Trait-to-parameter networks for an ensemble of independently initialised members trained at once.

Why an ensemble dimension: the evaluation needs several seeds and training-set sizes; stacking the
members' weights lets one batched ODE solve serve all of them, which is what keeps the embedded run
within a minute on two cores. Members share nothing but the optimiser call (Adam is elementwise).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from repro.papers.hysomi.soil_model import Bounds


class EnsembleMLP(nn.Module):
    """M independent MLPs (2 hidden SiLU layers) evaluated on the same inputs: (N, d) -> (M, N, out)."""

    def __init__(self, seeds: list[int], d_in: int, hidden: int, d_out: int, last_scale: float = 0.01):
        super().__init__()
        shapes = [(d_in, hidden), (hidden, hidden), (hidden, d_out)]
        weights, biases = [[] for _ in shapes], [[] for _ in shapes]
        for seed in seeds:
            gen = torch.Generator().manual_seed(int(seed))
            for i, (a, b) in enumerate(shapes):
                bound = 1.0 / math.sqrt(a)
                scale = last_scale if i == len(shapes) - 1 else 1.0
                weights[i].append(scale * (2 * torch.rand(a, b, generator=gen, dtype=torch.float64) - 1) * bound)
                biases[i].append(torch.zeros(1, b, dtype=torch.float64))
        self.weights = nn.ParameterList([nn.Parameter(torch.stack(w)) for w in weights])
        self.biases = nn.ParameterList([nn.Parameter(torch.stack(b)) for b in biases])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.unsqueeze(0).expand(self.weights[0].shape[0], -1, -1)
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = torch.baddbmm(b, h, w)
            if i < len(self.weights) - 1:
                h = nn.functional.silu(h)
        return h


class ParameterHead(nn.Module):
    """Traits -> biokinetic parameters inside their literature bounds: theta = from_unit(sigmoid(MLP(z)))."""

    def __init__(self, seeds: list[int], d_in: int, hidden: int, bounds: Bounds):
        super().__init__()
        self.mlp = EnsembleMLP(seeds, d_in, hidden, len(bounds.lo))
        self.bounds = bounds

    def forward(self, traits: torch.Tensor) -> torch.Tensor:
        return self.bounds.from_unit(torch.sigmoid(self.mlp(traits)))


class GlobalParameters(nn.Module):
    """Baseline B1: one parameter vector per member shared by all samples (traits ignored)."""

    def __init__(self, seeds: list[int], bounds: Bounds):
        super().__init__()
        init = torch.stack(
            [
                0.01 * torch.randn(len(bounds.lo), generator=torch.Generator().manual_seed(int(s)), dtype=torch.float64)
                for s in seeds
            ]
        )
        self.logits = nn.Parameter(init)
        self.bounds = bounds

    def forward(self, traits: torch.Tensor) -> torch.Tensor:
        theta = self.bounds.from_unit(torch.sigmoid(self.logits))
        return theta.unsqueeze(1).expand(-1, traits.shape[0], -1)


class BlackBox(nn.Module):
    """Baseline B4: traits -> standardised observed-state trajectories directly, no process model."""

    def __init__(self, seeds: list[int], d_in: int, hidden: int, n_times: int, n_states: int):
        super().__init__()
        self.mlp = EnsembleMLP(seeds, d_in, hidden, n_times * n_states, last_scale=1.0)
        self.shape = (n_times, n_states)

    def forward(self, traits: torch.Tensor) -> torch.Tensor:
        out = self.mlp(traits)
        return out.reshape(out.shape[0], out.shape[1], *self.shape)


class PerSampleParameters(nn.Module):
    """Baselines B3/B5, first step: one free parameter vector per training sample and member (traits ignored).

    Called on the training split it returns (M, N_train, 8); unseen samples get their parameters from
    :func:`transfer_parameters` (nearest training sample in trait space, or a ridge regression on traits).
    """

    def __init__(self, seeds: list[int], n_samples: int, bounds: Bounds):
        super().__init__()
        init = torch.stack(
            [
                0.01
                * torch.randn(
                    n_samples, len(bounds.lo), generator=torch.Generator().manual_seed(int(s)), dtype=torch.float64
                )
                for s in seeds
            ]
        )
        self.logits = nn.Parameter(init)
        self.bounds = bounds

    def unit(self) -> torch.Tensor:
        return torch.sigmoid(self.logits)

    def forward(self, traits: torch.Tensor) -> torch.Tensor:
        if traits.shape[0] != self.logits.shape[1]:
            raise ValueError(f"per-sample parameters exist for {self.logits.shape[1]} samples, got {traits.shape[0]}")
        return self.bounds.from_unit(self.unit())


def transfer_parameters(
    logits: torch.Tensor,
    train_traits: torch.Tensor,
    weight: torch.Tensor,
    traits: torch.Tensor,
    how: str,
    ridge: float = 1.0,
) -> torch.Tensor:
    """Per-member parameter logits (M, N, 8) of new samples from the calibrated ones of each member's training set.

    ``nearest``: the logits of the nearest training sample (Euclidean, z-scored traits; B3).
    ``regression``: a ridge regression (penalty ``ridge``, intercept free) of the logits on the traits (B5).
    """
    out = []
    for m in range(logits.shape[0]):
        idx = torch.nonzero(weight[m] > 0).flatten()
        x, y = train_traits[idx], logits[m, idx]
        if how == "nearest":
            out.append(y[torch.cdist(traits, x).argmin(dim=1)])
        elif how == "regression":
            mean_x, mean_y = x.mean(0), y.mean(0)
            xc = x - mean_x
            gram = xc.T @ xc + ridge * torch.eye(x.shape[1], dtype=x.dtype)
            coef = torch.linalg.solve(gram, xc.T @ (y - mean_y))
            out.append(mean_y + (traits - mean_x) @ coef)
        else:
            raise ValueError(f"unknown transfer {how!r}; expected 'nearest' or 'regression'")
    return torch.stack(out)
