"""ImgCoT's networks: a tiny decoder-only LM, the image tokenizer (VQ-VAE) and the text autoencoder.

Both tokenizers compress one chain of thought into the same number of discrete latent codes from a codebook
of the same size; they differ only in what they reconstruct: the rendered CoT image (spatial inductive bias)
or the CoT token sequence (linguistic inductive bias). The LM's vocabulary is extended by the codebook
entries and it is trained to emit question -> latent codes (-> kept text steps) -> answer.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class TinyLM(nn.Module):
    """Pre-norm causal transformer with learned positions and tied input/output embeddings."""

    def __init__(self, vocab: int, d_model: int, layers: int, heads: int, max_len: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        block = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.max_len = max_len

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        n = ids.shape[1]
        x = self.embed(ids) + self.pos(torch.arange(n, device=ids.device))
        mask = nn.Transformer.generate_square_subsequent_mask(n, device=ids.device)
        return self.norm(self.blocks(x, mask=mask, is_causal=True)) @ self.embed.weight.T


def lm_loss(model: TinyLM, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Next-token cross-entropy on the positions ``weight`` marks (latent codes, CoT text, answer)."""
    ids, weight = batch
    logits = model(ids[:, :-1])
    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none")
    w = weight[:, 1:].reshape(-1)
    return (nll * w).sum() / w.sum()


class VectorQuantizer(nn.Module):
    """Nearest-codebook quantisation with a straight-through gradient and the VQ-VAE commitment loss."""

    def __init__(self, codebook: int, dim: int, beta: float = 0.25) -> None:
        super().__init__()
        self.codes = nn.Embedding(codebook, dim)
        nn.init.uniform_(self.codes.weight, -1.0 / codebook, 1.0 / codebook)
        self.beta = beta
        # Data-dependent start: the first training batch's encoder outputs become the codebook, so that the codes
        # are not all nearest to one entry (codebook collapse); a buffer, so a resumed run keeps it.
        self.register_buffer("initialised", torch.tensor(False))

    def forward(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        flat = z.reshape(-1, z.shape[-1])
        if self.training and not bool(self.initialised):
            with torch.no_grad():
                pick = torch.randperm(len(flat), device=flat.device)[: self.codes.num_embeddings]
                pick = pick.repeat(self.codes.num_embeddings // len(pick) + 1)[: self.codes.num_embeddings]
                self.codes.weight.copy_(flat[pick] + 1e-3 * torch.randn_like(flat[pick]))
                self.initialised.fill_(True)
        index = torch.cdist(flat, self.codes.weight).argmin(1)
        if self.training:
            # random restart of the entries no vector of the batch chose (against codebook collapse)
            with torch.no_grad():
                dead = torch.bincount(index, minlength=self.codes.num_embeddings) == 0
                if bool(dead.any()):
                    pick = torch.randint(len(flat), (int(dead.sum()),), device=flat.device)
                    self.codes.weight[dead] = flat[pick].detach()
                    index = torch.cdist(flat, self.codes.weight).argmin(1)
        index = index.reshape(z.shape[:-1])
        q = self.codes(index)
        loss = F.mse_loss(q, z.detach()) + self.beta * F.mse_loss(z, q.detach())
        return z + (q - z).detach(), index, loss


class ImageVQ(nn.Module):
    """Conv encoder of the rendered CoT -> ``n_latent`` vectors -> VQ codes -> deconv decoder of the image."""

    def __init__(self, n_latent: int, codebook: int, dim: int, height: int, width: int, channels: int = 16) -> None:
        super().__init__()
        self.n_latent, self.dim, self.grid = n_latent, dim, (height // 16, width // 16)
        cells = self.grid[0] * self.grid[1] * channels
        self.encoder = nn.Sequential(
            nn.Conv2d(1, channels, 4, 4),
            nn.GELU(),
            nn.Conv2d(channels, channels, 4, 4),
            nn.GELU(),
            nn.Flatten(),
            nn.Linear(cells, n_latent * dim),
        )
        self.vq = VectorQuantizer(codebook, dim)
        self.decoder_in = nn.Linear(n_latent * dim, cells)
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(channels, channels, 4, 4), nn.GELU(), nn.ConvTranspose2d(channels, 1, 4, 4)
        )
        self.channels = channels

    def encode(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        z = self.encoder(images[:, None]).reshape(-1, self.n_latent, self.dim)
        return self.vq(z)

    def forward(self, images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, _, vq_loss = self.encode(images)
        h = self.decoder_in(q.reshape(q.shape[0], -1)).reshape(-1, self.channels, *self.grid)
        return self.decoder(F.gelu(h))[:, 0], vq_loss


def image_loss(model: ImageVQ, images: torch.Tensor) -> torch.Tensor:
    recon, vq_loss = model(images)
    return F.mse_loss(recon, images) + vq_loss


class TextAE(nn.Module):
    """GRU encoder of the CoT tokens -> ``n_latent`` vectors -> VQ codes -> GRU decoder of the tokens.

    The decoder is not autoregressive (its inputs are position embeddings, not the previous tokens), as the
    image decoder reconstructs the whole render from the codes: an autoregressive decoder predicts most of a
    chain from its own earlier tokens and ignores the codes (posterior collapse, measured on the landed commit:
    every chain got the same codes)."""

    def __init__(self, vocab: int, n_latent: int, codebook: int, dim: int, hidden: int, max_len: int = 128) -> None:
        super().__init__()
        self.n_latent, self.dim = n_latent, dim
        self.embed = nn.Embedding(vocab, hidden)
        self.encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.to_latent = nn.Linear(hidden, n_latent * dim)
        self.vq = VectorQuantizer(codebook, dim)
        self.from_latent = nn.Linear(n_latent * dim, hidden)
        self.positions = nn.Embedding(max_len, hidden)
        self.decoder = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def encode(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Codes of right-padded chains (pad id 0): the GRU state at each chain's last real token (the state after
        the padding has forgotten the chain, which made every chain's codes the same on the landed commit)."""
        out, _ = self.encoder(self.embed(ids))
        last = (ids != 0).sum(1).clamp_min(1) - 1
        h = out[torch.arange(len(ids), device=ids.device), last]
        z = self.to_latent(h).reshape(-1, self.n_latent, self.dim)
        return self.vq(F.layer_norm(z, (self.dim,)))  # unit-scale latents: code distances the decoder can use

    def decode(self, q: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Logits of tokens 1.. of ``ids`` given only the quantised codes ``q`` (and the positions)."""
        code = torch.tanh(self.from_latent(q.reshape(q.shape[0], -1)))
        steps = self.positions(torch.arange(ids.shape[1] - 1, device=ids.device))
        out, _ = self.decoder(steps[None] + code[:, None], code[None].contiguous())  # the codes at every step
        return self.out(out)

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, _, vq_loss = self.encode(ids)
        return self.decode(q, ids), vq_loss


def text_loss(model: TextAE, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    ids, mask = batch
    logits, vq_loss = model(ids)
    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none")
    m = mask[:, 1:].reshape(-1)
    return (nll * m).sum() / m.sum() + vq_loss
