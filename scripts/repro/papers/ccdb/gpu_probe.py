"""CCDB's training step at paper scale for benchmarks/gpu.py: the section's MLP on coloured 28x28 digits
(3 x 28 x 28 inputs), the weighted cross-entropy of stage 3 with CCDB's mean-1 sample weights."""

from __future__ import annotations

BATCH_SIZE = 256
INPUTS = 3 * 28 * 28


def build(section: dict, device):
    """(model, batch(size), loss) of one weighted-ERM step."""
    import torch
    from torch.nn import functional as F

    from repro.learning.smallnets import MLP

    model = MLP(INPUTS, section["model"]["hidden"], 10).to(device)

    def batch(size: int):
        w = torch.rand(size, device=device)
        return (
            torch.rand(size, INPUTS, device=device),
            torch.randint(0, 10, (size,), device=device),
            w / w.mean(),
        )

    def loss(net, b):
        x, y, w = b
        return (F.cross_entropy(net(x), y, reduction="none") * w).mean()

    return model, batch, loss
