"""GPU probe (benchmarks/gpu.py): one training step of CoD-Lite's diffusion decoder at the configured size.

The batch holds training crops of the configured side; the condition is a map of codebook vectors at the
codec's resolution, as the teacher's fine-tuning step sees it.
"""

from __future__ import annotations

import torch

from repro.papers.cod_lite.train import denoiser, diffusion_loss

BATCH_SIZE = 16


def build(section: dict, device):
    cfg, side = section["model"], section["images"]["crop"]
    net = denoiser(cfg).to(device)
    codebook = torch.randn(2 ** cfg["bits"], cfg["latent"], device=device)

    def condition(x: torch.Tensor) -> torch.Tensor:
        idx = torch.randint(0, len(codebook), (len(x), side // cfg["ds"], side // cfg["ds"]), device=x.device)
        return codebook[idx].permute(0, 3, 1, 2)

    def make_batch(size: int):
        return (torch.rand(size, 3, side, side, device=device) * 2 - 1,)

    return net, make_batch, diffusion_loss(condition)
