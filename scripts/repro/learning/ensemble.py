"""Stacks of independent small networks trained as one module (one batched matmul per layer).

Why: at smoke scale a paper trains many tiny models (methods x seeds); run one by one, Python overhead
dominates. A stack keeps every parameter with a leading member dimension, so members share nothing and
each trains exactly as it would alone (losses are summed), and ``repro.learning.training.train`` can keep each
member's own best weights.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class EnsembleLinear(nn.Module):
    """M independent affine maps: (M, B, i) -> (M, B, o); member m is initialised from ``seeds[m]``."""

    def __init__(self, seeds: list[int], d_in: int, d_out: int, scale: float = 1.0):
        super().__init__()
        weights, biases = [], []
        bound = scale / math.sqrt(d_in)
        for seed in seeds:
            gen = torch.Generator().manual_seed(int(seed))
            weights.append((torch.rand(d_in, d_out, generator=gen) * 2 - 1) * bound)
            biases.append((torch.rand(1, d_out, generator=gen) * 2 - 1) * bound)
        self.weight = nn.Parameter(torch.stack(weights))
        self.bias = nn.Parameter(torch.stack(biases))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.bias, x, self.weight)


class EnsembleMLP(nn.Module):
    """A stack of MLPs with SiLU activations; ``seeds`` sets each member's initialisation."""

    def __init__(self, seeds: list[int], sizes: list[int], last_scale: float = 1.0):
        super().__init__()
        self.layers = nn.ModuleList(
            [
                EnsembleLinear([1000 * int(s) + k for s in seeds], a, b, last_scale if k == len(sizes) - 2 else 1.0)
                for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))
            ]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            x = nn.functional.silu(layer(x))
        return self.layers[-1](x)
