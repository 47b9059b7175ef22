"""GPU probe (benchmarks/gpu.py): SynGR's training step at the full-scale model size on synthetic token batches.

History of ``train.history`` items of ``codes.levels`` text codes then as many image codes, a target of both
code blocks plus the disambiguation code; the loss is SynGR's (three copies plus the contrastive term).
"""

from __future__ import annotations

import torch

from repro.papers.syngr.model import Seq2Seq
from repro.papers.syngr.sequences import BOS
from repro.papers.syngr.synergy import syngr_loss

BATCH_SIZE = 1024


def build(section: dict, device):
    m, codes, hist, syn = section["model"], section["codes"], section["train"]["history"], section["synergy"]
    levels, book = codes["levels"], codes["codebook"]
    vocab = BOS + 1 + 2 * levels * book + book
    per_item = 2 * levels
    model = Seq2Seq(vocab, m["d"], m["heads"], m["layers"], m["ff"], hist * per_item, per_item + 1).to(device)
    modality = torch.tensor(([0] * levels + [1] * levels) * hist, device=device)

    def make_batch(size: int):
        g = torch.Generator().manual_seed(size)
        src = torch.randint(BOS + 1, vocab, (size, hist * per_item), generator=g)
        tgt = torch.randint(BOS + 1, vocab, (size, per_item + 1), generator=g)
        tgt_in = torch.cat([torch.full((size, 1), BOS), tgt[:, :-1]], 1)
        return tuple(t.to(device) for t in (src, tgt_in, tgt))

    def loss(model, batch):
        return syngr_loss(model, batch, modality, 2, syn["ratio"], syn["weight"], syn["temperature"])

    return model, make_batch, loss
