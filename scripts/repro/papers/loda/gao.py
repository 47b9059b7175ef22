"""Gradient-Aligned Optimisation (GAO) of the up-projections.

Each batch is split into halves B1 and B2. The parameters are moved along B2's normalised gradient by a
random radius rho ~ U(0, rho_max); B1's gradient at that point drives the update, which is applied at the
original parameters. Steps along which the two halves' gradients disagree get penalised (a SAM-like
agreement). It runs inside the shared loop: the loss function makes the perturbation and the optimiser
wrapper removes it before the inner optimiser steps.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


class GAOOptimizer:
    """Wraps an optimiser: ``perturb`` moves the parameters, ``step`` restores them, then steps."""

    def __init__(self, inner: torch.optim.Optimizer, params: list[torch.nn.Parameter], rho_max: float):
        self.inner, self.params, self.rho_max = inner, params, float(rho_max)
        self._offsets: list[torch.Tensor] = []

    def perturb(self, grads: tuple[torch.Tensor, ...]) -> float:
        """Move every parameter by rho * g / ||g|| (rho drawn from the global torch generator); returns rho."""
        norm = torch.sqrt(sum((g**2).sum() for g in grads))
        rho = float(torch.rand(())) * self.rho_max
        scale = rho / float(norm) if float(norm) > 0 else 0.0
        self._offsets = [scale * g.detach() for g in grads]
        with torch.no_grad():
            for p, e in zip(self.params, self._offsets):
                p.add_(e)
        return rho

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.inner.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        with torch.no_grad():
            for p, e in zip(self.params, self._offsets):
                p.sub_(e)
        self._offsets = []
        self.inner.step()

    def state_dict(self) -> dict:
        return self.inner.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.inner.load_state_dict(state)


def gao_loss(
    optimizer: GAOOptimizer, criterion: Callable[[torch.nn.Module, torch.Tensor, torch.Tensor], torch.Tensor]
) -> Callable[[torch.nn.Module, tuple[torch.Tensor, torch.Tensor]], torch.Tensor]:
    """The loss function for the shared loop: B2's gradient perturbs, B1's loss at the perturbed point is returned."""

    def loss(model: torch.nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        x, y = batch
        half = len(y) // 2
        if half == 0:
            optimizer._offsets = []
            return criterion(model, x, y)
        probe = criterion(model, x[half:], y[half:])
        grads = torch.autograd.grad(probe, optimizer.params)
        optimizer.perturb(grads)
        return criterion(model, x[:half], y[:half])

    return loss
