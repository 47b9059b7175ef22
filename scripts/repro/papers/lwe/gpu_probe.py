"""The LWE attack's training step at paper scale for benchmarks/gpu.py: one batched MLP per secret.

Members = secrets_per_h x len(hamming) (every secret of the grid trains at once); inputs are the angular
features of the cruel coordinates, here half of n (the split the reduction leaves depends on the data).
"""

from __future__ import annotations

BATCH_SIZE = 256
STAGE = "train"  # one job per seed: every (N, r) point of the grid (workflow/rules/lwe.smk)

# A forward pass's FLOPs per forward + backward step's (the backward's two matmuls per forward one).
FORWARD_SHARE = 1 / 3


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


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of one job of the train stage: each (N, r) of ``model.sizes`` x ``model.repetitions``
    trains a fresh model r epochs over N samples (sum(sizes) x sum(repetitions) samples), then scores it
    (repro.papers.lwe.model.distinguisher_scores): forward passes over ``model.test_samples`` samples, once
    unshifted and once per cruel coordinate (n // 2 of them, as the probe's inputs), each counted as
    :data:`FORWARD_SHARE` of a training sample; batch ``model.batch_size``. The step's members (secrets) and
    cruel columns are the probe's (secrets_per_h x len(hamming), n // 2); the data's own counts change the FLOPs
    per sample, not the samples. Left out: the cruel split and the attempt counting (NumPy, on the host)."""
    cfg = section["model"]
    grid = len(cfg["sizes"]) * len(cfg["repetitions"])
    training = sum(cfg["sizes"]) * sum(cfg["repetitions"])
    scoring = grid * (section["lwe"]["n"] // 2 + 1) * cfg["test_samples"] * FORWARD_SHARE
    return int(round(training + scoring)), int(cfg["batch_size"])
