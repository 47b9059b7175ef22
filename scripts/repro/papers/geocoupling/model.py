"""A two-modality masked discrete generative model whose two marginal processes run on their own clocks.

Sequence tokens and structure tokens are each masked independently: at modality time t (0 = noise,
1 = data) a token is visible with probability t. One denoiser sees both partially masked modalities
and both times and predicts every masked token. Training draws the time pair from the coupling
(curve plus jitter, or independent uniform for the random coupling); sampling walks the curve from
(0, 0) to (1, 1), revealing tokens at the rate the curve sets for each modality.

Every parameter carries a leading member dimension: one module trains many (coupling, seed) members
at once, each exactly as if alone (their losses are summed and share no parameter).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from repro.learning.ensemble import EnsembleLinear


class CoDesigner(nn.Module):
    """Masked denoiser over (sequence, structure) tokens for a stack of members."""

    def __init__(self, seeds: list[int], seq_len: int, seq_vocab: int, struct_len: int, struct_vocab: int, hidden: int):
        super().__init__()
        self.seq_len, self.seq_vocab, self.struct_len, self.struct_vocab = seq_len, seq_vocab, struct_len, struct_vocab
        d_in = seq_len * (seq_vocab + 1) + struct_len * (struct_vocab + 1) + 4
        d_out = seq_len * seq_vocab + struct_len * struct_vocab
        self.layers = nn.ModuleList(
            [
                EnsembleLinear([1000 * s + 1 for s in seeds], d_in, hidden),
                EnsembleLinear([1000 * s + 2 for s in seeds], hidden, hidden),
                EnsembleLinear([1000 * s + 3 for s in seeds], hidden, d_out),
            ]
        )

    @property
    def members(self) -> int:
        return self.layers[0].weight.shape[0]

    def forward(
        self, seq: torch.Tensor, struct: torch.Tensor, t_struct: torch.Tensor, t_seq: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Tokens (M, B, L) with the mask id = vocab size, times (M, B) -> logits (M, B, L, vocab) per modality."""
        m, b = seq.shape[:2]
        features = [
            nn.functional.one_hot(seq, self.seq_vocab + 1).flatten(2).float(),
            nn.functional.one_hot(struct, self.struct_vocab + 1).flatten(2).float(),
            torch.stack([t_struct, t_seq, torch.sin(math.pi * t_struct), torch.sin(math.pi * t_seq)], -1),
        ]
        h = torch.cat(features, -1)
        for layer in self.layers[:-1]:
            h = nn.functional.silu(layer(h))
        out = self.layers[-1](h)
        split = self.seq_len * self.seq_vocab
        return (
            out[..., :split].reshape(m, b, self.seq_len, self.seq_vocab),
            out[..., split:].reshape(m, b, self.struct_len, self.struct_vocab),
        )


def training_times(
    alpha: torch.Tensor,
    random: torch.Tensor,
    jitter: torch.Tensor,
    batch: int,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(s, t_struct, t_seq), each (M, B): on the member's curve within +-jitter, or independent (random)."""
    m, dev = alpha.shape[0], alpha.device
    s = torch.rand(m, batch, generator=generator, device=dev)
    u = torch.rand(2, m, batch, generator=generator, device=dev) * 2 - 1
    independent = torch.rand(m, batch, generator=generator, device=dev)
    j, a = jitter[:, None], alpha[:, None]
    t_struct = torch.clamp(s + j * u[0], 0.0, 1.0)
    t_seq = torch.clamp(s**a + j * u[1], 0.0, 1.0)
    rnd = random[:, None]
    return s, torch.where(rnd, s, t_struct), torch.where(rnd, independent, t_seq)


def masked_loss(
    model: CoDesigner,
    seq: torch.Tensor,
    struct: torch.Tensor,
    t_struct: torch.Tensor,
    t_seq: torch.Tensor,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Per-member cross-entropy of the masked tokens (summed over tokens, averaged over the batch), (M,)."""
    hide_seq = torch.rand(seq.shape, generator=generator, device=seq.device) >= t_seq[..., None]
    hide_struct = torch.rand(struct.shape, generator=generator, device=struct.device) >= t_struct[..., None]
    seq_in = torch.where(hide_seq, model.seq_vocab, seq)
    struct_in = torch.where(hide_struct, model.struct_vocab, struct)
    seq_logits, struct_logits = model(seq_in, struct_in, t_struct, t_seq)
    ce_seq = nn.functional.cross_entropy(seq_logits.flatten(0, 2), seq.flatten(), reduction="none").view(seq.shape)
    ce_struct = nn.functional.cross_entropy(struct_logits.flatten(0, 2), struct.flatten(), reduction="none").view(
        struct.shape
    )
    total = (ce_seq * hide_seq).sum(-1) + (ce_struct * hide_struct).sum(-1)
    return total.mean(-1)


@torch.no_grad()
def sample(
    model: CoDesigner, alpha: torch.Tensor, n: int, steps: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generate n (sequence, structure) pairs per member along t_struct = s, t_seq = s ** alpha."""
    m = model.members
    seq = torch.full((m, n, model.seq_len), model.seq_vocab, dtype=torch.long)
    struct = torch.full((m, n, model.struct_len), model.struct_vocab, dtype=torch.long)
    a = alpha[:, None].to(torch.float32)
    for k in range(steps):
        s0, s1 = k / steps, (k + 1) / steps
        t_struct0 = torch.full((m, n), s0)
        t_seq0 = torch.full((m, n), s0) ** a
        seq_logits, struct_logits = model(seq, struct, t_struct0, t_seq0)
        for tokens, logits, t0, t1, vocab in (
            (seq, seq_logits, t_seq0, torch.full((m, n), s1) ** a, model.seq_vocab),
            (struct, struct_logits, t_struct0, torch.full((m, n), s1), model.struct_vocab),
        ):
            reveal_p = torch.where(t0 < 1, (t1 - t0) / (1 - t0).clamp_min(1e-12), torch.ones_like(t0))
            if k == steps - 1:
                reveal_p = torch.ones_like(reveal_p)
            reveal = (torch.rand(tokens.shape, generator=generator) < reveal_p[..., None]) & (tokens == vocab)
            probs = torch.softmax(logits, -1)
            drawn = torch.multinomial(probs.flatten(0, 2), 1, generator=generator).view(tokens.shape)
            tokens.copy_(torch.where(reveal, drawn, tokens))
    return seq, struct
