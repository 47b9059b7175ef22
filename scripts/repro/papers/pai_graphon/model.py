"""A bias-free MLP input -> width -> width -> output whose weight matrices are plain tensors, so that masks,
saliency scores and per-example Jacobians act on exactly the matrices whose graphons are studied."""

from __future__ import annotations

import torch


def init_weights(d_in: int, width: int, d_out: int, seed: int) -> list[torch.Tensor]:
    """I.i.d. Gaussian (He) initialisation; layer l has shape (fan_out, fan_in). Seeded by (seed, width)."""
    gen = torch.Generator().manual_seed(1_000_003 * seed + width)
    shapes = [(width, d_in), (width, width), (d_out, width)]
    gains = [2.0, 2.0, 1.0]
    return [torch.randn(shape, generator=gen) * (gain / shape[1]) ** 0.5 for shape, gain in zip(shapes, gains)]


def forward(weights: list[torch.Tensor], x: torch.Tensor, masks: list[torch.Tensor] | None = None) -> torch.Tensor:
    """Logits of the (masked) network."""
    h = x
    for layer, w in enumerate(weights):
        if masks is not None:
            w = w * masks[layer]
        h = h @ w.T
        if layer < len(weights) - 1:
            h = torch.relu(h)
    return h


def loss_fn(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy: binary (one logit) or multi-class."""
    if logits.shape[1] == 1:
        return torch.nn.functional.binary_cross_entropy_with_logits(logits[:, 0], y.to(logits.dtype))
    return torch.nn.functional.cross_entropy(logits, y)
