"""GPU probe (benchmarks/gpu.py): the co-design stack at the configured size with a synthetic batch."""

from __future__ import annotations

import torch

from repro.papers.geocoupling.model import CoDesigner, loss, training_times
from repro.papers.geocoupling.windows import AMINO, feature_size

BATCH_SIZE = 256


def build(section: dict, device):
    """The final stack of every (coupling, seed) member of ``section`` on ``device``, window-shaped inputs."""
    members = len(section["couplings"]) * len(section["seeds"])
    width = int(section["windows"]["width"])
    cfg = section["model"]
    model = CoDesigner(list(range(members)), width, feature_size(width), int(cfg["hidden"]), int(cfg["depth"]))
    model = model.to(device)
    alpha = torch.linspace(0.25, 4.0, members, device=device)
    random = torch.zeros(members, dtype=torch.bool, device=device)
    jitter = torch.full((members,), float(section["jitter"]), device=device)

    def make_batch(size: int):
        gen = torch.Generator(device=device).manual_seed(0)
        seq = torch.randint(0, len(AMINO), (members, size, width), generator=gen, device=device)
        x = torch.randn(members, size, feature_size(width), generator=gen, device=device)
        _, t_struct, t_seq = training_times(alpha, random, jitter, size, gen)
        return seq, x, t_struct, t_seq

    def step_loss(model: CoDesigner, batch) -> torch.Tensor:
        seq, x, t_struct, t_seq = batch
        return loss(model, seq, x, t_struct, t_seq, torch.Generator(device=seq.device).manual_seed(1)).sum()

    return model, make_batch, step_loss
