"""The LWE attack's training step at paper scale for benchmarks/gpu.py: one batched MLP per secret.

Members = secrets_per_h x len(hamming) (every secret of the grid trains at once); inputs are the angular
features of the cruel coordinates, here half of n (the split the reduction leaves depends on the data).
"""

from __future__ import annotations

BATCH_SIZE = 256


def build(section: dict, device):
    """(model, batch(size), loss) of one distinguisher step: the training stage's model and squared loss."""
    import torch

    from repro.papers.lwe.model import BatchedMLP

    lwe, cfg = section["lwe"], section["model"]
    members, inputs = lwe["secrets_per_h"] * len(lwe["hamming"]), 2 * (lwe["n"] // 2)
    model = BatchedMLP(members, inputs, cfg["hidden"], torch.Generator().manual_seed(0)).to(device)

    def batch(size: int):
        angle = torch.rand(members, size, device=device) * 6.283185307179586
        return torch.randn(size, inputs, device=device), torch.stack([angle.cos(), angle.sin()], dim=-1)

    def loss(net, b):
        x, y = b
        return torch.mean((net(x) - y) ** 2)

    return model, batch, loss
