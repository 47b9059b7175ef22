"""GPO's training step at paper scale for benchmarks/gpu.py: Navier-Stokes (FNO's 64 x 64 vorticity), periodic.

The model is the section's GPO (particles, width, layers, heads); the loss is the training loss with the
particle-alignment term.
"""

from __future__ import annotations

BATCH_SIZE = 20
RESOLUTION = 64


def build(section: dict, device, resolution: int = RESOLUTION):
    """(model, batch(size), loss) of one GPO step on ``resolution``-squared periodic fields."""
    import torch

    from repro.papers.gpo.train import build as build_model
    from repro.papers.gpo.train import mse_loss

    model = build_model("gpo", section, periodic=True).to(device)
    align = section["model"]["align_weight"]

    def batch(size: int):
        shape = (size, 1, resolution, resolution)
        return torch.randn(shape, device=device), torch.randn(shape, device=device)

    def loss(net, b):
        return mse_loss(net, b, align)

    return model, batch, loss
