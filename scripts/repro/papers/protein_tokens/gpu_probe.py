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
STAGE = "train"  # the one train job: every seed x variant (workflow/rules/protein-tokens.smk)

# Paper-scale windows (docs/papers/protein-tokens.md: "a million windows of 256 residues", from AFDB's
# Swiss-Prot set at window 256, stride 128) and the share of them in training chains (the structures source's
# split_fractions, data.structures.split_fractions[0] in config/full.yaml, outside this paper's section).
PAPER_SCALE_WINDOWS = 1_000_000
TRAIN_SHARE = 0.7


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


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of the train stage's one job: for each of ``seeds`` and each of ``variants``, ``train.epochs``
    epochs over the training windows (PAPER_SCALE_WINDOWS x TRAIN_SHARE: user data, the number does not follow
    ``windows.window`` / ``stride``); the variants count alike (local's step has 0.97 of the probe's FLOPs,
    apt_no_nested the same); batch ``train.batch``. Left out: the decodes of every token prefix, the shrunk
    decode, the codes of every window and the implementation checks (forward only)."""
    train_windows = int(PAPER_SCALE_WINDOWS * TRAIN_SHARE)
    runs = len(section["seeds"]) * len(section["variants"])
    return int(runs * section["train"]["epochs"] * train_windows), int(section["train"]["batch"])
