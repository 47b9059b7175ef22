"""LoRA branches on every linear layer of a backbone, merged into its weights after each task.

A branch adds B A x to a frozen linear layer: A (r, d_in) is the down-projection (fixed to a chosen basis, or
trained as in plain LoRA), B (d_out, r) the up-projection, starting at zero so the first step sees the merged
backbone unchanged.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus named LoRA branches."""

    def __init__(self, base: nn.Linear):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.downs = nn.ParameterDict()
        self.ups = nn.ParameterDict()

    def add_branch(self, name: str, down: torch.Tensor | None, rank: int, generator: torch.Generator) -> None:
        """Branch ``name``: a fixed down-projection ``down`` (r, d_in), or a trained one initialised as in LoRA
        (Kaiming-uniform rows) when ``down`` is None; the up-projection starts at zero."""
        d_out, d_in = self.base.weight.shape
        if down is None:
            bound = 1.0 / math.sqrt(d_in)
            a = nn.Parameter((torch.rand(rank, d_in, generator=generator) * 2 - 1) * bound)
        else:
            a = nn.Parameter(down.to(self.base.weight.dtype).clone(), requires_grad=False)
        self.downs[name] = a
        self.ups[name] = nn.Parameter(torch.zeros(d_out, a.shape[0]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.base(x)
        for name, a in self.downs.items():
            out = out + (x @ a.T) @ self.ups[name].T
        return out

    def merge(self, scales: dict[str, torch.Tensor] | None = None) -> None:
        """W <- W + sum_branches B diag(scale) A, then drop the branches (scale 1 where none is given)."""
        scales = scales or {}
        with torch.no_grad():
            for name, a in self.downs.items():
                b = self.ups[name]
                s = scales.get(name)
                b = b if s is None else b * s.to(b.dtype)
                self.base.weight += b @ a
        self.downs = nn.ParameterDict()
        self.ups = nn.ParameterDict()


def wrap_linears(model: nn.Module) -> dict[str, LoRALinear]:
    """Replace every ``nn.Linear`` of ``model`` in place by a :class:`LoRALinear`; returns them by name."""
    found = {}
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, nn.Linear):
                wrapped = LoRALinear(child)
                setattr(module, child_name, wrapped)
                found[f"{name}.{child_name}" if name else child_name] = wrapped
    return found


def layer_inputs(model: nn.Module, layers: dict[str, LoRALinear], x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The inputs each wrapped layer sees when ``model`` runs on ``x`` (no gradient)."""
    seen: dict[str, torch.Tensor] = {}
    hooks = [
        layer.register_forward_pre_hook(lambda _m, args, n=name: seen.__setitem__(n, args[0].detach()))
        for name, layer in layers.items()
    ]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
    return seen
