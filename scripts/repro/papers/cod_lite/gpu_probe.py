"""GPU probe (benchmarks/gpu.py): one training step of CoD-Lite's diffusion decoder at the configured size.

The batch holds training crops of the configured side with their quantised latents, as the diffusion
teacher's training step sees them.
"""

from __future__ import annotations

import torch

from repro.papers.cod_lite import model
from repro.papers.cod_lite.train import diffusion_loss

BATCH_SIZE = 16


def build(section: dict, device):
    cfg, side = section["model"], section["images"]["crop"]
    net = model.Denoiser(cfg["width"], cfg["latent"], cfg["ds"], cfg["denoiser_blocks"], cfg["patch"]).to(device)

    def make_batch(size: int):
        x = torch.rand(size, 3, side, side, device=device) * 2 - 1
        q = torch.randint(
            -cfg["levels"], cfg["levels"] + 1, (size, cfg["latent"], side // cfg["ds"], side // cfg["ds"])
        )
        return x, q.float().to(device)

    return net, make_batch, diffusion_loss(1.0)
