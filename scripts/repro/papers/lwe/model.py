"""A batched MLP distinguisher: one independent model per secret, trained together (the secrets share A).

Inputs are the angular embedding (cos, sin)(2 pi a / q) of the cruel coordinates of a reduced sample, the
target the angle of b as (cos, sin) (the lineage's angular encoding; a small MLP is the brief's small-scale
stand-in for the transformer). The distinguisher adds q/4 to coordinate i of held-out inputs and scores i by
the mean change of the predicted angle: when s_i = 1 the true b moves by a quarter turn.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def angular(values: np.ndarray, q: int) -> torch.Tensor:
    """(…, k) integers mod q -> (…, 2k) float32 features."""
    theta = torch.as_tensor(2 * math.pi * np.mod(values, q) / q, dtype=torch.float32)
    return torch.cat([torch.cos(theta), torch.sin(theta)], dim=-1)


class BatchedMLP(torch.nn.Module):
    """``members`` independent two-hidden-layer MLPs evaluated with batched matrix products."""

    def __init__(self, members: int, inputs: int, hidden: int, generator: torch.Generator) -> None:
        super().__init__()

        def weight(fan_in: int, fan_out: int) -> torch.nn.Parameter:
            bound = 1.0 / math.sqrt(fan_in)
            w = (torch.rand(members, fan_in, fan_out, generator=generator) * 2 - 1) * bound
            return torch.nn.Parameter(w)

        self.w1, self.w2, self.w3 = weight(inputs, hidden), weight(hidden, hidden), weight(hidden, 2)
        self.b1 = torch.nn.Parameter(torch.zeros(members, 1, hidden))
        self.b2 = torch.nn.Parameter(torch.zeros(members, 1, hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, d) shared by all members -> (members, B, 2)."""
        h = torch.relu(torch.einsum("bd,mdh->mbh", x, self.w1) + self.b1)
        h = torch.relu(torch.bmm(h, self.w2) + self.b2)
        return torch.bmm(h, self.w3)


def distinguisher_scores(model: BatchedMLP, a_test: np.ndarray, q: int) -> np.ndarray:
    """(members, c) mean absolute change of the predicted angle when coordinate i moves by q/4."""
    device = model.w1.device
    with torch.no_grad():
        base = model(angular(a_test, q).to(device))
        angle = torch.atan2(base[..., 1], base[..., 0])
        scores = []
        for i in range(a_test.shape[1]):
            shifted = a_test.copy()
            shifted[:, i] += q // 4
            out = model(angular(shifted, q).to(device))
            diff = torch.remainder(torch.atan2(out[..., 1], out[..., 0]) - angle + math.pi, 2 * math.pi) - math.pi
            scores.append(diff.abs().mean(dim=1))
    return torch.stack(scores, dim=1).cpu().numpy()
