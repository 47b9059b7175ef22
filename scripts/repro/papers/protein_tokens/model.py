"""APT's tokenizers and decoders in torch: global coarse-to-fine tokens with FSQ, a local baseline, two decoders.

- :class:`FSQ`: finite scalar quantisation (Mentzer et al. 2023): each code dimension bounded by tanh and
  rounded to ``levels[i]`` values with a straight-through gradient; codebook size = prod(levels).
- :class:`GlobalTokenizer` (APT): a residue transformer, then K tokens each reading the whole backbone, with
  causal attention among tokens (a prefix never depends on later tokens); training keeps a random prefix
  k ~ U{1..K} (nested dropout), so any prefix decodes and the order is coarse to fine.
- :class:`LocalTokenizer` (baseline): the same residue encoder with attention restricted to a band of
  ``radius`` residues, then each token pools one contiguous neighbourhood of L/K residues: K tokens of
  the same FSQ levels, i.e. exactly the same number of bits as the global tokenizer.
- :class:`RegressionDecoder` (smoke-scale stand-in for the paper's flow-matching decoder): the kept tokens
  give one latent, and a per-residue MLP maps it with the relative position i/(L'-1) and the length L' to
  N/CA/C; decoding the same tokens at a smaller L' is zero-shot shrinking. Trained with Kabsch-RMSD plus
  a distance-matrix loss.
- :class:`FlowDecoder` (full scale, the paper's decoder): conditional flow matching on the backbone
  coordinates (straight paths from Gaussian noise, Kabsch-aligned to the target), velocity from the same
  token-conditioned transformer, sampled with Euler steps.

Residue features are invariant to rigid motions (C-alpha distance rows, neighbour positions in each
residue's N/CA/C frame), so tokens do not change when the input is rotated or translated.
"""

from __future__ import annotations

import math

import torch
from torch import nn

ANGSTROM_SCALE = 10.0  # coordinates and distances enter the networks in nm-like units
NEIGHBOURS = (-2, -1, 1, 2)


def round_ste(x: torch.Tensor) -> torch.Tensor:
    """Round with a straight-through gradient (the backward pass is the identity)."""
    return x + (torch.round(x) - x).detach()


class FSQ(nn.Module):
    """Finite scalar quantisation of the last dimension to the integer grid of ``levels`` (normalised to [-1, 1])."""

    def __init__(self, levels: list[int]):
        super().__init__()
        levels_t = torch.tensor(levels, dtype=torch.float32)
        self.register_buffer("levels", levels_t, persistent=False)
        self.register_buffer("half_width", torch.floor(levels_t / 2), persistent=False)
        self.dim = len(levels)

    @property
    def bits(self) -> float:
        """Bits per token: log2 of the codebook size."""
        return float(torch.log2(self.levels).sum())

    def bound(self, z: torch.Tensor) -> torch.Tensor:
        """tanh-bound ``z`` so that rounding gives exactly ``levels[i]`` values (even levels offset by 1/2)."""
        half = (self.levels - 1) * (1 + 1e-3) / 2
        offset = torch.where(self.levels % 2 == 0, 0.5, 0.0)
        shift = torch.atanh(offset / half)
        return torch.tanh(z + shift) * half - offset

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return round_ste(self.bound(z)) / self.half_width

    def indices(self, q: torch.Tensor) -> torch.Tensor:
        """Integer code of each quantised vector (mixed-radix digits), for counting codebook use."""
        digits = torch.round(q * self.half_width + self.half_width).long()
        basis = torch.cumprod(torch.cat([torch.ones(1), self.levels[:-1]]), 0).long()
        return (digits * basis).sum(-1)


def sinusoidal(x: torch.Tensor, dim: int, scale: float = 1.0) -> torch.Tensor:
    """Sinusoidal features of a real-valued position ``x`` (any shape) -> ``[..., dim]``."""
    freqs = torch.exp(torch.arange(dim // 2, dtype=torch.float32, device=x.device) * (-math.log(1e4) / (dim // 2)))
    angles = x[..., None].float() * scale * freqs
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)


def residue_frames(backbone: torch.Tensor) -> torch.Tensor:
    """Orthonormal frame per residue from N, CA, C (Gram-Schmidt; rows = axes): ``[B, L, 3, 3]``."""
    n, ca, c = backbone[..., 0, :], backbone[..., 1, :], backbone[..., 2, :]
    e1 = nn.functional.normalize(c - ca, dim=-1)
    u = n - ca
    e2 = nn.functional.normalize(u - (u * e1).sum(-1, keepdim=True) * e1, dim=-1)
    return torch.stack([e1, e2, torch.cross(e1, e2, dim=-1)], dim=-2)


def residue_features(backbone: torch.Tensor, mask: torch.Tensor, max_len: int) -> torch.Tensor:
    """Rigid-motion-invariant features per residue: its C-alpha distance row (padded to ``max_len``) and its
    neighbours' C-alpha offsets in its own frame, in units of 10 Å; zero at padded residues."""
    ca = backbone[..., 1, :]
    dist = torch.cdist(ca, ca) / ANGSTROM_SCALE * mask[:, None, :] * mask[:, :, None]
    row = nn.functional.pad(dist, (0, max_len - dist.shape[-1]))
    frames = residue_frames(backbone)
    local = []
    for offset in NEIGHBOURS:
        shifted = torch.roll(ca, -offset, dims=1)
        valid = torch.roll(mask, -offset, dims=1) * mask
        index = torch.arange(ca.shape[1], device=ca.device) + offset
        valid = valid * ((index >= 0) & (index < ca.shape[1])).float()
        rel = torch.einsum("blij,blj->bli", frames, shifted - ca) / ANGSTROM_SCALE
        local.append(rel * valid[..., None])
    return torch.cat([row, *local], dim=-1) * mask[..., None]


def feature_dim(max_len: int) -> int:
    return max_len + 3 * len(NEIGHBOURS)


def _layer(width: int, heads: int) -> nn.TransformerEncoderLayer:
    return nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True, norm_first=True)


class ResidueEncoder(nn.Module):
    """Residue features + index embedding -> width, for both tokenizers."""

    def __init__(self, max_len: int, width: int):
        super().__init__()
        self.max_len, self.width = max_len, width
        self.embed = nn.Linear(feature_dim(max_len), width)

    def forward(self, backbone: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.embed(residue_features(backbone, mask, self.max_len))
        index = torch.arange(backbone.shape[1], device=backbone.device)
        return x + sinusoidal(index, self.width)[None]


class GlobalTokenizer(nn.Module):
    """APT's encoder: a transformer over the residues, then K global tokens, each quantised by FSQ.

    Token j reads every residue through its own learned read-out weights over residue positions (so from
    the first step each token carries information about the whole structure; a query cross-attention,
    initially a uniform average, learned far more slowly at smoke scale), then the tokens pass through
    causal self-attention (token j sees tokens <= j), so a prefix never depends on the tokens after it.
    """

    def __init__(self, max_len: int, width: int, layers: int, heads: int, tokens: int, levels: list[int]):
        super().__init__()
        self.n_tokens = tokens
        self.residues = ResidueEncoder(max_len, width)
        self.blocks = nn.ModuleList(_layer(width, heads) for _ in range(layers))
        self.readout = nn.Linear(max_len, tokens)
        self.token_blocks = nn.ModuleList([_layer(width, heads)])
        self.fsq = FSQ(levels)
        # A final norm keeps the pre-quantisation values O(1): tiny ones would all round to one level.
        self.to_code = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, self.fsq.dim))

    def pre_quantised(self, backbone: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.residues(backbone, mask)
        for block in self.blocks:
            x = block(x, src_key_padding_mask=mask < 0.5)
        x = x * mask[..., None]
        x = nn.functional.pad(x, (0, 0, 0, self.residues.max_len - x.shape[1]))
        tokens = self.readout(x.transpose(1, 2)).transpose(1, 2)
        causal = torch.triu(torch.ones(self.n_tokens, self.n_tokens, dtype=torch.bool, device=x.device), diagonal=1)
        for block in self.token_blocks:
            tokens = block(tokens, src_mask=causal)
        return self.to_code(tokens)

    def forward(self, backbone: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Quantised tokens ``[B, K, code_dim]``."""
        return self.fsq(self.pre_quantised(backbone, mask))


class LocalTokenizer(nn.Module):
    """Local baseline: banded-attention residue encoder, one token per contiguous neighbourhood of residues."""

    def __init__(self, max_len: int, width: int, layers: int, heads: int, tokens: int, levels: list[int], radius: int):
        super().__init__()
        self.n_tokens, self.radius = tokens, radius
        self.residues = ResidueEncoder(max_len, width)
        self.blocks = nn.ModuleList(_layer(width, heads) for _ in range(layers))
        self.fsq = FSQ(levels)
        self.to_code = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, self.fsq.dim))

    def pre_quantised(self, backbone: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.residues(backbone, mask)
        length = backbone.shape[1]
        index = torch.arange(length, device=x.device)
        band = (index[:, None] - index[None, :]).abs() > self.radius
        # No key-padding mask: a padded residue's band may hold padding only (an all-blocked row gives NaN);
        # padded residues carry zero features and are left out of the pooling below.
        for block in self.blocks:
            x = block(x, src_mask=band)
        # Token t pools residues [t L/K, (t+1) L/K) of the actual chain length (masked mean).
        lengths = mask.sum(1, keepdim=True)
        segment = torch.clamp((index[None].float() * self.n_tokens / lengths).long(), max=self.n_tokens - 1)
        onehot = nn.functional.one_hot(segment, self.n_tokens).float() * mask[..., None]
        pooled = torch.einsum("blt,blw->btw", onehot, x) / onehot.sum(1).clamp(min=1.0)[..., None]
        return self.to_code(pooled)

    def forward(self, backbone: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.fsq(self.pre_quantised(backbone, mask))


class TokenConditioner(nn.Module):
    """Shared decoder trunk: residue queries at relative positions cross-attend to the kept tokens."""

    def __init__(self, code_dim: int, tokens: int, width: int, layers: int, heads: int, max_len: int, extra: int = 0):
        super().__init__()
        self.width, self.max_len = width, max_len
        self.up = nn.Linear(code_dim, width)
        self.token_position = nn.Parameter(torch.randn(tokens, width) * 0.02)
        self.query = nn.Linear(2 * width + extra, width)
        self.blocks = nn.ModuleList(
            nn.TransformerDecoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True, norm_first=True)
            for _ in range(layers)
        )

    def forward(self, codes: torch.Tensor, keep: torch.Tensor, mask: torch.Tensor, extra=None) -> torch.Tensor:
        """``codes [B, K, c]``, ``keep [B, K]`` (1 = token kept), ``mask [B, L']`` -> residue states ``[B, L', w]``."""
        memory = self.up(codes) + self.token_position[None, : codes.shape[1]]
        lengths = mask.sum(1, keepdim=True)
        index = torch.arange(mask.shape[1], device=mask.device)[None].float()
        fraction = index / (lengths - 1).clamp(min=1.0)
        parts = [sinusoidal(fraction, self.width, scale=100.0), sinusoidal(lengths / self.max_len, self.width, 100.0)]
        parts[1] = parts[1].expand(-1, mask.shape[1], -1)
        if extra is not None:
            parts.append(extra)
        x = self.query(torch.cat(parts, dim=-1))
        for block in self.blocks:
            x = block(x, memory, tgt_key_padding_mask=mask < 0.5, memory_key_padding_mask=keep < 0.5)
        return x


class RegressionDecoder(nn.Module):
    """Smoke-scale decoder (a stand-in for flow matching): the kept tokens (dropped ones zeroed, in token order)
    give one latent of the structure, and a per-residue MLP maps that latent with the residue's relative position
    i/(L'-1) and the length L' to its N/CA/C coordinates, so the same tokens decode at any length (shrinking)."""

    def __init__(self, code_dim: int, tokens: int, width: int, layers: int, heads: int, max_len: int):
        super().__init__()
        self.width, self.max_len = width, max_len
        hidden = 4 * width
        self.latent = nn.Sequential(nn.Linear(code_dim * tokens, hidden), nn.GELU(), nn.Linear(hidden, hidden))
        blocks: list[nn.Module] = [nn.Linear(hidden + 2 * width, hidden), nn.GELU()]
        for _ in range(layers - 1):
            blocks += [nn.Linear(hidden, hidden), nn.GELU()]
        self.mlp = nn.Sequential(*blocks, nn.Linear(hidden, 9))

    def forward(self, codes: torch.Tensor, keep: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.latent((codes * keep[..., None]).flatten(1))
        lengths = mask.sum(1, keepdim=True)
        index = torch.arange(mask.shape[1], device=mask.device)[None].float()
        fraction = index / (lengths - 1).clamp(min=1.0)
        position = sinusoidal(fraction, self.width, scale=100.0)
        size = sinusoidal(lengths / self.max_len, self.width, 100.0).expand(-1, mask.shape[1], -1)
        x = torch.cat([h[:, None].expand(-1, mask.shape[1], -1), position, size], dim=-1)
        return self.mlp(x).reshape(*mask.shape, 3, 3) * ANGSTROM_SCALE


def _kabsch(mobile: torch.Tensor, target: torch.Tensor, mask: torch.Tensor):
    """Centred ``mobile`` and ``target`` ``[B, N, 3]``, the target centroid and the optimal proper rotation
    (``mobile @ R^T`` onto ``target``; SVD in float64, determinant +1), with weights ``mask [B, N]``."""
    w = mask / mask.sum(1, keepdim=True).clamp(min=1.0)
    mu_m = (w[..., None] * mobile).sum(1, keepdim=True)
    mu_t = (w[..., None] * target).sum(1, keepdim=True)
    m, t = mobile - mu_m, target - mu_t
    h = torch.einsum("bn,bni,bnj->bij", w, m, t)
    u, _, vt = torch.linalg.svd(h.double())
    d = torch.sign(torch.linalg.det(vt.transpose(1, 2) @ u.transpose(1, 2)))
    d = torch.where(d == 0, torch.ones_like(d), d)
    diag = torch.diag_embed(torch.stack([torch.ones_like(d), torch.ones_like(d), d], -1))
    rotation = (vt.transpose(1, 2) @ diag @ u.transpose(1, 2)).to(mobile.dtype)
    return m, t, mu_t, rotation, w


def kabsch_rmsd(pred: torch.Tensor, true: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per-sample RMSD ``[B]`` of point sets ``[B, N, 3]`` after optimal superposition (weights ``mask [B, N]``),
    differentiable (SVD); the proper rotation only (determinant +1)."""
    p, t, _, rotation, w = _kabsch(pred, true, mask)
    aligned = p @ rotation.transpose(1, 2)
    return torch.sqrt((w * ((aligned - t) ** 2).sum(-1)).sum(1) + 1e-8)


def align_to(mobile: torch.Tensor, target: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``mobile [B, N, 3]`` optimally rotated and translated onto ``target`` (no gradient through the motion)."""
    with torch.no_grad():
        m, _, mu_t, rotation, _ = _kabsch(mobile, target, mask)
    return m @ rotation.transpose(1, 2) + mu_t


def reconstruction_loss(pred: torch.Tensor, true: torch.Tensor, mask: torch.Tensor, distance_weight: float):
    """Kabsch-RMSD over all backbone atoms (Å) plus the mean squared error of C-alpha distances (in 10 Å units)."""
    b, length = mask.shape
    atom_mask = mask[..., None].expand(b, length, 3).reshape(b, -1)
    rmsd = kabsch_rmsd(pred.reshape(b, -1, 3), true.reshape(b, -1, 3), atom_mask)
    d_pred = torch.cdist(pred[..., 1, :], pred[..., 1, :]) / ANGSTROM_SCALE
    d_true = torch.cdist(true[..., 1, :], true[..., 1, :]) / ANGSTROM_SCALE
    pair = mask[:, :, None] * mask[:, None, :]
    dist = (pair * (d_pred - d_true) ** 2).sum((1, 2)) / pair.sum((1, 2)).clamp(min=1.0)
    return rmsd.mean() + distance_weight * dist.mean()


class FlowDecoder(nn.Module):
    """Full-scale decoder (the paper's): conditional flow matching of backbone coordinates given the tokens."""

    def __init__(self, code_dim: int, tokens: int, width: int, layers: int, heads: int, max_len: int):
        super().__init__()
        self.trunk = TokenConditioner(code_dim, tokens, width, layers, heads, max_len, extra=9 + width)
        self.width = width
        self.out = nn.Linear(width, 9)

    def velocity(self, x_t: torch.Tensor, t: torch.Tensor, codes, keep, mask) -> torch.Tensor:
        b, length = mask.shape
        extra = torch.cat(
            [
                x_t.reshape(b, length, 9) / ANGSTROM_SCALE,
                sinusoidal(t, self.width, 100.0)[:, None].expand(-1, length, -1),
            ],
            -1,
        )
        return self.out(self.trunk(codes, keep, mask, extra)).reshape(b, length, 3, 3) * ANGSTROM_SCALE

    def loss(self, codes, keep, true: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Flow-matching loss on straight paths from noise (aligned to the target by Kabsch) to the target."""
        b, length = mask.shape
        atom_mask = mask[..., None].expand(b, length, 3).reshape(b, -1)
        noise = torch.randn_like(true) * ANGSTROM_SCALE
        noise = align_to(noise.reshape(b, -1, 3), true.reshape(b, -1, 3), atom_mask).reshape(true.shape)
        t = torch.rand(b, device=true.device)
        x_t = (1 - t)[:, None, None, None] * noise + t[:, None, None, None] * true
        err = (self.velocity(x_t, t, codes, keep, mask) - (true - noise)) / ANGSTROM_SCALE
        return ((err**2).sum((-1, -2)) * mask).sum() / mask.sum().clamp(min=1.0)

    @torch.no_grad()
    def sample(self, codes, keep, mask: torch.Tensor, steps: int, generator=None) -> torch.Tensor:
        b, length = mask.shape
        x = torch.randn(b, length, 3, 3, generator=generator, device=mask.device) * ANGSTROM_SCALE
        for i in range(steps):
            t = torch.full((b,), i / steps, device=mask.device)
            x = x + self.velocity(x, t, codes, keep, mask) / steps
        return x


class Autoencoder(nn.Module):
    """A tokenizer, its decoder and (global tokenizer) a size head predicting the chain length from the tokens."""

    def __init__(self, kind: str, cfg: dict, max_len: int, decoder: str = "regression"):
        super().__init__()
        common = dict(max_len=max_len, width=cfg["width"], layers=cfg["layers"], heads=cfg["heads"])
        levels, tokens = list(cfg["levels"]), cfg["tokens"]
        if kind == "global":
            self.tokenizer = GlobalTokenizer(**common, tokens=tokens, levels=levels)
        else:
            self.tokenizer = LocalTokenizer(**common, tokens=tokens, levels=levels, radius=cfg["local_radius"])
        decoder_cls = FlowDecoder if decoder == "flow" else RegressionDecoder
        self.decoder = decoder_cls(len(levels), tokens, cfg["width"], cfg["decoder_layers"], cfg["heads"], max_len)
        self.size_head = nn.Linear(len(levels) * tokens, 1)
        self.kind, self.decoder_kind, self.max_len = kind, decoder, max_len
        self.flow_steps = cfg.get("flow_steps", 20)

    def size(self, codes: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """Predicted length / max_len from the kept tokens (dropped ones zeroed)."""
        return self.size_head((codes * keep[..., None]).flatten(1)).squeeze(-1)

    def decode(self, codes, keep, mask, generator=None) -> torch.Tensor:
        if self.decoder_kind == "flow":
            return self.decoder.sample(codes, keep, mask, self.flow_steps, generator)
        return self.decoder(codes, keep, mask)


def nested_keep(batch: int, tokens: int, generator=None, device=None) -> torch.Tensor:
    """Nested dropout: per sample keep the first k ~ U{1..K} tokens -> ``[B, K]`` of 0/1."""
    k = torch.randint(1, tokens + 1, (batch, 1), generator=generator, device=device)
    return (torch.arange(tokens, device=device)[None] < k).float()


def prefix_keep(batch: int, tokens: int, k: int, device=None) -> torch.Tensor:
    return (torch.arange(tokens, device=device)[None] < k).float().expand(batch, -1)


def random_crop(mask: torch.Tensor, min_fraction: float) -> torch.Tensor:
    """Keep a random leading fraction in [min_fraction, 1] of each sample's residues (at least 3): chains of
    many lengths, as the paper trains on, so the size head and decoding at another length (shrinking) are
    trained rather than extrapolated."""
    lengths = mask.sum(1)
    fraction = min_fraction + (1 - min_fraction) * torch.rand(len(mask), device=mask.device)
    keep = torch.clamp(torch.ceil(fraction * lengths), min=3.0)
    return mask * (torch.arange(mask.shape[1], device=mask.device)[None] < keep[:, None]).float()


def training_loss(
    model: Autoencoder, batch, nested: bool, distance_weight: float, size_weight: float, min_crop: float = 1.0
):
    """One batch's loss: the reconstruction (or flow-matching) loss from a nested-dropout prefix, plus L_size,
    on randomly cropped chains when ``min_crop`` < 1."""
    backbone, mask = batch
    if min_crop < 1.0:
        mask = random_crop(mask, min_crop)
    codes = model.tokenizer(backbone, mask)
    tokens = codes.shape[1]
    keep = (
        nested_keep(len(backbone), tokens, device=backbone.device)
        if nested
        else prefix_keep(len(backbone), tokens, tokens, backbone.device)
    )
    if model.decoder_kind == "flow":
        loss = model.decoder.loss(codes, keep, backbone, mask)
    else:
        loss = reconstruction_loss(model.decoder(codes, keep, mask), backbone, mask, distance_weight)
    size = model.size(codes, keep)
    return loss + size_weight * ((size - mask.sum(1) / model.max_len) ** 2).mean()
