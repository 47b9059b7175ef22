"""Flower's training step at paper scale for benchmarks/gpu.py: The Well's shear flow (4 fields, 128 x 256).

Inputs are the state plus its static fields as the training pairs build them (here none: shear flow has no
static field); the loss is the increment regression of training.
"""

from __future__ import annotations

BATCH_SIZE = 16
CHANNELS = 4
GRID = (128, 256)


def build(section: dict, device, grid: tuple[int, int] = GRID):
    """(model, batch(size), loss) of one Flower step at the section's width, heads, levels and blocks."""
    import torch

    from repro.papers.flower.train import build as build_model
    from repro.papers.flower.train import mse_loss

    model = build_model("flower", CHANNELS, CHANNELS, section["model"]).to(device)

    def batch(size: int):
        shape = (size, CHANNELS, *grid)
        return torch.randn(shape, device=device), torch.randn(shape, device=device)

    return model, batch, mse_loss
