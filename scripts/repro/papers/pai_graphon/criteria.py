"""Pruning-at-initialisation saliency scores and layer-wise masks.

- random: i.i.d. uniform scores;
- magnitude: |w|;
- snip: |w * dL/dw| on one scoring batch (Lee et al. 2019);
- grasp: S = -w * (H g) with g = dL/dw, H the Hessian, on the same batch (Wang et al. 2020), where the
  weights with the *highest* S are removed, i.e. the lowest are kept.
Every criterion keeps round(density * size) weights of each layer (layer-wise thresholding). Random scores
come from a CPU generator, so Random masks do not depend on the device.
"""

from __future__ import annotations

import torch

from repro.papers.pai_graphon import model

CRITERIA = ("random", "magnitude", "snip", "grasp")


def scores(
    criterion: str, weights: list[torch.Tensor], x: torch.Tensor, y: torch.Tensor, generator: torch.Generator
) -> list[torch.Tensor]:
    """Saliency of every weight, oriented so that larger means 'keep'."""
    if criterion == "random":
        return [torch.rand(w.shape, generator=generator).to(w.device) for w in weights]
    if criterion == "magnitude":
        return [w.abs() for w in weights]
    params = [w.detach().clone().requires_grad_(True) for w in weights]
    loss = model.loss_fn(model.forward(params, x), y)
    if criterion == "snip":
        grads = torch.autograd.grad(loss, params)
        return [(p * g).abs().detach() for p, g in zip(params, grads)]
    if criterion == "grasp":
        grads = torch.autograd.grad(loss, params, create_graph=True)
        gnorm = sum((g * g.detach()).sum() for g in grads)
        hg = torch.autograd.grad(gnorm, params)
        return [(p * h).detach() for p, h in zip(params, hg)]  # = -S: keeping the largest keeps the lowest S
    raise ValueError(f"unknown criterion {criterion!r}; expected one of {CRITERIA}")


def layer_masks(layer_scores: list[torch.Tensor], density: float) -> list[torch.Tensor]:
    """Boolean masks keeping the round(density * size) highest-scoring weights of each layer."""
    masks = []
    for s in layer_scores:
        k = max(1, int(round(density * s.numel())))
        keep = torch.zeros(s.numel(), dtype=torch.bool, device=s.device)
        keep[torch.topk(s.flatten(), k).indices] = True
        masks.append(keep.view(s.shape))
    return masks


def prune(criterion: str, weights, x, y, density: float, seed: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """(masks, scores) of one criterion at one density; random scores are seeded by ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    s = scores(criterion, weights, x, y, gen)
    return layer_masks(s, density), s
