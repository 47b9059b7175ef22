"""The Mosaic forecaster at smoke scale: lat-lon patches as tokens, pre-norm transformer, noise-gated SwiGLU.

Grid: latitude-longitude blocks (HEALPix is the paper's grid; see README). Patches of
``patch x patch`` grid points become tokens; tokens are reordered into tiles of
``tile_lat x tile_lon`` tokens so that each contiguous block of ``block`` tokens is a compact
patch of the sphere, which is what makes block selection share keys between neighbouring queries.
The decoder interpolates token features back to the grid points (bilinear, periodic in longitude;
the smoke-scale stand-in for Mosaic's k-nearest-neighbour cross-attention decoder) and applies a
pointwise linear layer to [features, input states], so no patch edges appear in the output. The
network maps (two input states, static features, noise z) to the next normalised state directly (no
residual is added), and is rolled out autoregressively.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from repro.papers.mosaic.attention import Attention, rope_angles


@dataclass
class ModelSettings:
    channels: int
    history: int = 2
    width: int = 64
    depth: int = 3
    heads: int = 4
    kv_heads: int = 2
    patch: int | tuple[int, int] = 2
    tile: tuple[int, int] = (2, 8)
    local_block: int = 64
    top_k: int = 4
    sparse: bool = True
    noise_dim: int = 8
    mlp_ratio: int = 4
    # recompute each block's activations in the backward pass (torch.utils.checkpoint): training then keeps
    # the blocks' inputs, not their attention scores (at 1.5 deg those of one block are tens of GB)
    checkpoint: bool = False


def rms_norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm without affine parameters, as in the paper's blocks."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


class NoisySwiGLU(nn.Module):
    """FFN(x, z) = W2(SiLU(W1 x + Wz z) * W3 x): the member's noise enters every gate (functional perturbation)."""

    def __init__(self, dim: int, hidden: int, noise_dim: int):
        super().__init__()
        self.w1, self.w3 = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.wz = nn.Linear(noise_dim, hidden, bias=False) if noise_dim else None
        if self.wz is not None:
            nn.init.normal_(self.wz.weight, std=0.01)

    def forward(self, x: torch.Tensor, z: torch.Tensor | None) -> torch.Tensor:
        gate = self.w1(x)
        if self.wz is not None:
            gate = gate + self.wz(z)[:, None, :]
        return self.w2(F.silu(gate) * self.w3(x))


class Block(nn.Module):
    def __init__(self, s: ModelSettings, block: int):
        super().__init__()
        self.attn = Attention(
            s.width, s.heads, s.kv_heads, sparse=s.sparse, local_block=s.local_block, block=block, top_k=s.top_k
        )
        self.ffn = NoisySwiGLU(s.width, s.mlp_ratio * s.width, s.noise_dim)

    def forward(self, x, z, rope):
        x = x + self.attn(rms_norm(x), rope)
        return x + self.ffn(rms_norm(x), z)


def padded_latitudes(latitude: np.ndarray, rows: int) -> np.ndarray:
    """Extend the latitudes past the last row with its spacing so the token grid fills whole tiles.

    A 1.5° grid with poles has 121 rows, which no tile height divides; the extra rows are zero-padded
    in the input and cropped from the output.
    """
    extra = rows - latitude.size
    step = latitude[-1] - latitude[-2]
    return np.concatenate([latitude, latitude[-1] + step * np.arange(1, extra + 1)])


def persistence_init(head: nn.Conv2d, width: int, history: int, channels: int) -> None:
    """Start the pointwise head at persistence: the newest input state passes through, the token features enter
    with zero weight. The network still predicts the next state directly; it starts from the input instead of
    from a random map of it."""
    with torch.no_grad():
        head.weight.zero_()
        head.bias.zero_()
        newest = width + (history - 1) * channels
        head.weight[:, newest : newest + channels, 0, 0] = torch.eye(channels)


def tile_order(n_lat: int, n_lon: int, tile: tuple[int, int]) -> np.ndarray:
    """Permutation from raster token order to tile order (each tile of tokens contiguous)."""
    tl, tw = tile
    if n_lat % tl or n_lon % tw:
        raise ValueError(f"token grid {n_lat}x{n_lon} is not divisible by tiles {tile}")
    idx = np.arange(n_lat * n_lon).reshape(n_lat // tl, tl, n_lon // tw, tw)
    return idx.transpose(0, 2, 1, 3).reshape(-1)


class Mosaic(nn.Module):
    """Next-state forecaster; ``forward(history, z)`` with history (B, T, C, lat, lon), z (B, noise_dim) or None."""

    def __init__(self, s: ModelSettings, latitude: np.ndarray, longitude: np.ndarray):
        super().__init__()
        self.s = s
        self.n_rows = len(latitude)
        self.patch = (s.patch, s.patch) if isinstance(s.patch, int) else tuple(s.patch)
        pl, pw = self.patch
        n_lat = -(-len(latitude) // (pl * s.tile[0])) * s.tile[0]
        n_lon = len(longitude) // pw
        if len(longitude) % pw:
            raise ValueError(f"{len(longitude)} longitudes are not divisible by the patch width {pw}")
        latitude = padded_latitudes(np.asarray(latitude, float), n_lat * pl)
        self.block = s.tile[0] * s.tile[1]
        n_tokens = n_lat * n_lon
        if n_tokens % s.local_block or s.local_block % self.block:
            raise ValueError(f"{n_tokens} tokens, local block {s.local_block}, block {self.block} do not nest")
        lat = torch.tensor(latitude, dtype=torch.float32)
        lon = torch.tensor(longitude, dtype=torch.float32)
        grid_lat, grid_lon = torch.meshgrid(lat, lon, indexing="ij")
        static = torch.stack(
            [
                grid_lat.deg2rad().sin(),
                grid_lat.deg2rad().cos() * grid_lon.deg2rad().cos(),
                grid_lat.deg2rad().cos() * grid_lon.deg2rad().sin(),
            ]
        )
        self.register_buffer("static", static, persistent=False)
        order = torch.as_tensor(tile_order(n_lat, n_lon, s.tile))
        self.register_buffer("order", order, persistent=False)
        self.register_buffer("inverse", torch.argsort(order), persistent=False)
        tok_lat = lat.reshape(n_lat, pl).mean(1)[:, None].expand(n_lat, n_lon).reshape(-1)[order]
        tok_lon = lon.reshape(n_lon, pw).mean(1)[None, :].expand(n_lat, n_lon).reshape(-1)[order]
        cos, sin = rope_angles(tok_lat, tok_lon, s.width // s.heads)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.embed = nn.Conv2d(s.history * s.channels + 3, s.width, self.patch, stride=self.patch)
        self.blocks = nn.ModuleList(Block(s, self.block) for _ in range(s.depth))
        self.head = nn.Conv2d(s.width + s.history * s.channels, s.channels, 1)
        persistence_init(self.head, s.width, s.history, s.channels)
        self.grid = (n_lat, n_lon)

    def forward(self, history: torch.Tensor, z: torch.Tensor | None = None) -> torch.Tensor:
        history = F.pad(history, (0, 0, 0, self.static.shape[-2] - history.shape[-2]))
        b, t, c, h, w = history.shape
        x = torch.cat([history.reshape(b, t * c, h, w), self.static.expand(b, -1, -1, -1)], dim=1)
        tokens = self.embed(x).flatten(2).transpose(1, 2)[:, self.order]
        rope = (self.rope_cos, self.rope_sin)
        for block in self.blocks:
            if self.s.checkpoint and torch.is_grad_enabled():
                tokens = checkpoint(block, tokens, z, rope, use_reentrant=False)
            else:
                tokens = block(tokens, z, rope)
        features = rms_norm(tokens)[:, self.inverse].transpose(1, 2).reshape(b, -1, *self.grid)
        out = self.head(torch.cat([self.to_grid(features), history.reshape(b, t * c, h, w)], dim=1))
        return out[..., : self.n_rows, :]

    def to_grid(self, features: torch.Tensor) -> torch.Tensor:
        """Bilinear interpolation of (B, width, n_lat, n_lon) token features to the grid, periodic in longitude."""
        pl, pw = self.patch
        padded = torch.cat([features[..., -1:], features, features[..., :1]], dim=-1)
        fine = F.interpolate(padded, scale_factor=(pl, pw), mode="bilinear", align_corners=False)
        return fine[..., pw:-pw]
