"""GPU probe (benchmarks/gpu.py): the RealNVP stack of the configured size on normal-space-perturbed points."""

from __future__ import annotations

import torch

from repro.papers.constrained_generative.manifolds import manifold
from repro.papers.constrained_generative.models import build as build_model

BATCH_SIZE = 1024


def build(section: dict, device):
    """One member per seed, ambient dimension of the largest configured task, a synthetic perturbed batch."""
    d = max(manifold(t).d for t in section["tasks"])
    model = build_model("flow", [int(s) for s in section["seeds"]], d, section["models"]["flow"]).to(device)
    members = len(section["seeds"])

    def make_batch(size: int) -> torch.Tensor:
        gen = torch.Generator(device=device).manual_seed(0)
        x = torch.randn(members, size, d, generator=gen, device=device)
        return (
            x
            / x.norm(dim=-1, keepdim=True)
            * (1 + float(section["sigma"]) * torch.randn(members, size, 1, generator=gen, device=device))
        )

    def loss(model, batch: torch.Tensor) -> torch.Tensor:
        return model.loss(batch).sum()

    return model, make_batch, loss
