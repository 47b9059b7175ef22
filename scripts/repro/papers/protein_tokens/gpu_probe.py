"""GPU probe (benchmarks/gpu.py): one APT training step at the paper's scale from the merged full-scale section.

The full-scale model: the global tokenizer with the section's token budget and FSQ levels and the
flow-matching decoder, on synthetic backbones of the full window length (ideal-geometry chains with random
torsions, so the residue features are those of real proteins' backbones).
"""

from __future__ import annotations

import numpy as np
import torch

from repro.metrics.protein_geometry import build_backbone
from repro.papers.protein_tokens.model import Autoencoder, training_loss

BATCH_SIZE = 32


def build(section: dict, device):
    """(model, make_batch(size) -> (backbone, mask), loss(model, batch) -> scalar) on ``device``."""
    length = section["windows"]["window"]
    model = Autoencoder("global", section["model"], length, section["model"].get("decoder", "regression")).to(device)
    loss_cfg = section["loss"]

    def make_batch(size: int):
        rng = np.random.default_rng(size)
        phi = rng.uniform(-np.pi, np.pi, (size, length))
        psi = rng.uniform(-np.pi, np.pi, (size, length))
        backbone = np.stack([build_backbone(a, b) for a, b in zip(phi, psi)])
        return torch.from_numpy(backbone).to(device), torch.ones(size, length, device=device)

    def loss(model, batch):
        return training_loss(
            model, batch, True, loss_cfg["distance_weight"], loss_cfg["size_weight"], loss_cfg["min_crop"]
        )

    return model, make_batch, loss
