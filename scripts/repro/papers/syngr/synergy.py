"""SynGR's synergy objective (brief section 3): dominant-modality masking and the contrastive term.

Per sample: token importance from the encoder's last-layer attention; the dominant modality is the block with
the higher mean importance over the history; its floor(ratio * n) most important tokens (n = its non-padded
tokens) are replaced by padding. The model runs on the original, masked and unimodal (dominant block only)
inputs; the cross-entropy is summed over the three copies, and a two-way softmax over cosine similarities /
temperature pulls the masked representation towards the original (positive) and away from the unimodal one
(negative). Constraining the masked input to look like the multimodal one forces the model to use the other
modality and what only the combination shows instead of the dominant modality's strongest tokens.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from repro.papers.syngr.model import Seq2Seq, importance
from repro.papers.syngr.sequences import PAD


def dominant_modality(imp: torch.Tensor, src: torch.Tensor, modality: torch.Tensor, blocks: int) -> torch.Tensor:
    """(B,) index of the block with the highest mean importance over its non-padded tokens."""
    present = (src != PAD).to(imp.dtype)
    means = []
    for m in range(blocks):
        in_block = present * (modality == m).to(imp.dtype)
        means.append((imp * in_block).sum(1) / in_block.sum(1).clamp_min(1.0))
    return torch.stack(means, 1).argmax(1)


def mask_dominant(
    src: torch.Tensor, imp: torch.Tensor, modality: torch.Tensor, dominant: torch.Tensor, ratio: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Source with the top floor(ratio * n_dom) tokens of the dominant block padded, and the count per sample."""
    in_dom = (modality.unsqueeze(0) == dominant.unsqueeze(1)) & (src != PAD)
    count = torch.floor(ratio * in_dom.sum(1).to(torch.float64)).to(torch.long)
    ranked = torch.where(in_dom, imp, float("-inf")).argsort(dim=1, descending=True, stable=True)
    rank = torch.empty_like(ranked).scatter_(1, ranked, torch.arange(src.shape[1], device=src.device).expand_as(ranked))
    masked = in_dom & (rank < count.unsqueeze(1))
    return src.masked_fill(masked, PAD), masked.sum(1)


def unimodal(src: torch.Tensor, modality: torch.Tensor, dominant: torch.Tensor) -> torch.Tensor:
    """Source with every token outside the dominant block padded."""
    return src.masked_fill(modality.unsqueeze(0) != dominant.unsqueeze(1), PAD)


def seq2seq_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def syngr_loss(
    model: Seq2Seq,
    batch: tuple[torch.Tensor, ...],
    modality: torch.Tensor,
    blocks: int,
    ratio: float,
    weight: float,
    temperature: float,
) -> torch.Tensor:
    """Cross-entropy on original, masked and unimodal copies + ``weight`` x the two-way contrastive loss."""
    src, tgt_in, tgt_out = batch
    with torch.no_grad():
        imp = importance(model, src)
    dom = dominant_modality(imp, src, modality, blocks)
    masked, _ = mask_dominant(src, imp, modality, dom, ratio)
    copies = torch.cat([src, masked, unimodal(src, modality, dom)])
    logits, hidden = model(copies, tgt_in.repeat(3, 1))
    ce = 3.0 * seq2seq_loss(logits, tgt_out.repeat(3, 1))
    rep_o, rep_m, rep_u = hidden.mean(1).chunk(3)
    sims = torch.stack([F.cosine_similarity(rep_m, rep_o), F.cosine_similarity(rep_m, rep_u)], 1) / temperature
    contrast = F.cross_entropy(sims, torch.zeros(len(src), dtype=torch.long, device=src.device))
    return ce + weight * contrast
