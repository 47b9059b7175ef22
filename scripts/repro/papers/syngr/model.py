"""A small T5-like encoder-decoder over semantic-ID tokens, with the encoder's attention exposed.

The paper fine-tunes T5; at small scale the same roles are played by a pre-LN transformer encoder whose
last layer returns its attention weights (needed for SynGR's token importance) and a standard transformer
decoder. The sequence representation used by the contrastive term is the mean of the last decoder hidden states.
Generation is beam search constrained by the prefix trie of valid IDs, so only existing items are generated.
"""

from __future__ import annotations

import torch
from torch import nn

from repro.papers.syngr.sequences import BOS, PAD, Trie


class EncoderLayer(nn.Module):
    """Pre-LN self-attention + feed-forward block that can return its head-averaged attention weights."""

    def __init__(self, d: int, heads: int, ff: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, dropout=0.0, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def forward(self, x: torch.Tensor, pad: torch.Tensor, weights: bool = False):
        h = self.norm1(x)
        out, attn = self.attn(h, h, h, key_padding_mask=pad, need_weights=weights, average_attn_weights=True)
        x = x + out
        return x + self.ff(self.norm2(x)), attn


class Seq2Seq(nn.Module):
    """Encoder-decoder over token IDs (PAD = 0, BOS = 1)."""

    def __init__(self, vocab: int, d: int, heads: int, layers: int, ff: int, max_src: int, max_tgt: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d, padding_idx=PAD)
        self.src_pos = nn.Parameter(torch.randn(max_src, d) * 0.02)
        self.tgt_pos = nn.Parameter(torch.randn(max_tgt, d) * 0.02)
        self.encoder = nn.ModuleList(EncoderLayer(d, heads, ff) for _ in range(layers))
        self.enc_norm = nn.LayerNorm(d)
        layer = nn.TransformerDecoderLayer(d, heads, ff, dropout=0.0, batch_first=True, norm_first=True)
        self.decoder = nn.TransformerDecoder(layer, layers)
        self.dec_norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def encode(self, src: torch.Tensor, weights: bool = False):
        """Memory (B, S, d), key padding mask (B, S) and, with ``weights``, last-layer attention (B, S, S)."""
        pad = src == PAD
        # A fully padded row (every history token masked) would give NaN attention: keep its first key.
        pad = pad & ~(pad.all(1, keepdim=True) & (torch.arange(src.shape[1], device=src.device) == 0))
        x = self.embed(src) + self.src_pos[: src.shape[1]]
        attn = None
        for i, layer in enumerate(self.encoder):
            x, attn = layer(x, pad, weights=weights and i == len(self.encoder) - 1)
        return self.enc_norm(x), pad, attn

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        """Last decoder hidden states (B, T, d) under a causal mask."""
        t = tgt_in.shape[1]
        causal = torch.triu(torch.full((t, t), float("-inf"), device=tgt_in.device), diagonal=1)
        x = self.embed(tgt_in) + self.tgt_pos[:t]
        return self.dec_norm(self.decoder(x, memory, tgt_mask=causal, memory_key_padding_mask=pad))

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits (B, T, vocab) and decoder hidden states (B, T, d)."""
        memory, pad, _ = self.encode(src)
        hidden = self.decode(tgt_in, memory, pad)
        return self.head(hidden), hidden


def importance(model: Seq2Seq, src: torch.Tensor) -> torch.Tensor:
    """Token importance (B, S): last-layer attention averaged over heads and over the non-padded queries."""
    _, pad, attn = model.encode(src, weights=True)
    queries = (~pad).to(attn.dtype).unsqueeze(-1)
    return (attn * queries).sum(1) / queries.sum(1).clamp_min(1.0)


@torch.no_grad()
def beam_search(model: Seq2Seq, src: torch.Tensor, trie: Trie, beams: int, length: int) -> torch.Tensor:
    """(B, beams) item indices ranked by sequence log-probability (-1 where fewer valid IDs exist)."""
    device = src.device
    children = torch.as_tensor(trie.children, device=device)
    memory, pad, _ = model.encode(src)
    b = src.shape[0]
    rows = torch.arange(b, device=device)[:, None]
    seqs = torch.full((b, 1, 1), BOS, dtype=torch.long, device=device)
    nodes = torch.zeros((b, 1), dtype=torch.long, device=device)
    scores = torch.zeros((b, 1), device=device)
    for _ in range(length):
        k = seqs.shape[1]
        flat = seqs.reshape(b * k, -1)
        hidden = model.decode(flat, memory.repeat_interleave(k, 0), pad.repeat_interleave(k, 0))
        logp = torch.log_softmax(model.head(hidden[:, -1]), -1).reshape(b, k, -1)
        nxt = children[nodes]  # (b, k, vocab)
        total = torch.where(nxt >= 0, scores.unsqueeze(-1) + logp, float("-inf")).reshape(b, -1)
        top, idx = total.topk(min(beams, total.shape[1]), dim=1)
        beam, tok = idx // logp.shape[-1], idx % logp.shape[-1]
        seqs = torch.cat([seqs[rows, beam], tok.unsqueeze(-1)], dim=-1)
        nodes = torch.where(torch.isfinite(top), nxt.reshape(b, -1).gather(1, idx), 0)
        scores = top
    items = torch.as_tensor(trie.item, device=device)[nodes]
    return torch.where(torch.isfinite(scores), items, -1).cpu()
