"""GPU probe (benchmarks/gpu.py): the co-design stack at the configured size with a synthetic batch."""

from __future__ import annotations

import torch

from repro.papers.geocoupling.model import CoDesigner, masked_loss, training_times

BATCH_SIZE = 256


def build(section: dict, device):
    """The stack of every (coupling, seed) member of ``section`` on ``device``, HP-lattice token shapes."""
    members = len(section["couplings"]) * len(section["seeds"])
    n = int(section["residues"])
    model = CoDesigner(list(range(members)), n, 2, n - 2, 3, int(section["model"]["hidden"])).to(device)
    alpha = torch.linspace(0.25, 4.0, members, device=device)
    random = torch.zeros(members, dtype=torch.bool, device=device)
    jitter = torch.full((members,), float(section["jitter"]), device=device)

    def make_batch(size: int):
        gen = torch.Generator(device=device).manual_seed(0)
        seq = torch.randint(0, 2, (members, size, n), generator=gen, device=device)
        struct = torch.randint(0, 3, (members, size, n - 2), generator=gen, device=device)
        _, t_struct, t_seq = training_times(alpha, random, jitter, size, gen)
        return seq, struct, t_struct, t_seq

    def loss(model: CoDesigner, batch) -> torch.Tensor:
        seq, struct, t_struct, t_seq = batch
        gen = torch.Generator(device=seq.device).manual_seed(1)
        return masked_loss(model, seq, struct, t_struct, t_seq, gen).sum()

    return model, make_batch, loss
