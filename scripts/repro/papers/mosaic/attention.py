"""Block-sparse attention (pure torch, the CPU reference of Mosaic's Triton kernel) and its dense counterpart.

Tokens are ordered so that a contiguous block is a compact patch of the sphere; then three branches,
mixed by per-token, per-head gates (softmax over 3 logits):
- local: exact attention inside contiguous blocks of ``local_block`` tokens;
- compressed: q, k, v mean-pooled over ``block`` tokens, block-to-block attention, broadcast back;
- selected: for each query block, the ``top_k`` key blocks with the largest pooled q.k score
  (averaged over the heads sharing a key/value head), then exact attention of every query of the
  block to all tokens of those key blocks: keys and values are shared by spatially adjacent queries.
With ``top_k`` covering all blocks the selected branch is dense attention exactly (a permutation of
the keys does not change softmax attention); the tests and the claims check this.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def dense_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over the last two dims; (..., N, D)."""
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return scores.softmax(dim=-1) @ v


def expand_kv(x: torch.Tensor, heads: int) -> torch.Tensor:
    """Repeat grouped key/value heads (B, Hkv, ...) to the query heads (B, H, ...)."""
    return x.repeat_interleave(heads // x.shape[1], dim=1)


def local_branch(q, k, v, local_block: int) -> torch.Tensor:
    b, h, n, d = q.shape
    nb = n // local_block
    split = lambda t: t.reshape(b, h, nb, local_block, d)  # noqa: E731
    return dense_attention(split(q), split(k), split(v)).reshape(b, h, n, d)


def compressed_branch(q, k, v, block: int) -> torch.Tensor:
    b, h, n, d = q.shape
    pool = lambda t: t.reshape(b, h, n // block, block, d).mean(dim=3)  # noqa: E731
    out = dense_attention(pool(q), pool(k), pool(v))
    return out.repeat_interleave(block, dim=2)


def select_blocks(q, k, block: int, top_k: int, kv_heads: int) -> torch.Tensor:
    """Indices (B, Hkv, n_blocks, top_k) of the key blocks each query block attends to."""
    b, h, n, d = q.shape
    nb = n // block
    q_pool = q.reshape(b, h, nb, block, d).mean(dim=3)
    k_pool = k.reshape(b, kv_heads, nb, block, d).mean(dim=3)
    scores = q_pool @ expand_kv(k_pool, h).transpose(-1, -2)
    grouped = scores.reshape(b, kv_heads, h // kv_heads, nb, nb).mean(dim=2)
    return grouped.topk(min(top_k, nb), dim=-1).indices


def selected_branch(q, k, v, block: int, top_k: int) -> torch.Tensor:
    """Exact attention of each query block to its selected key blocks; kv of shape (B, Hkv, N, D)."""
    b, h, n, d = q.shape
    kv_heads = k.shape[1]
    nb = n // block
    index = select_blocks(q, k, block, top_k, kv_heads)
    kb = k.reshape(b, kv_heads, nb, block, d)
    vb = v.reshape(b, kv_heads, nb, block, d)
    # Advanced indexing (b, hkv, query block, top_k) -> key blocks: memory and its backward (a scatter-add)
    # stay linear in the tokens; gathering from a per-query-block expanded copy would cost nb^2.
    rows = torch.arange(b)[:, None, None, None]
    heads = torch.arange(kv_heads)[None, :, None, None]
    k_sel, v_sel = kb[rows, heads, index], vb[rows, heads, index]
    shape = (b, kv_heads, nb, index.shape[-1] * block, d)
    k_sel, v_sel = expand_kv(k_sel.reshape(shape), h), expand_kv(v_sel.reshape(shape), h)
    out = dense_attention(q.reshape(b, h, nb, block, d), k_sel, v_sel)
    return out.reshape(b, h, n, d)


class Attention(nn.Module):
    """Multi-head attention with grouped keys/values, 2-D rotary positions, and a dense or block-sparse core."""

    def __init__(self, dim: int, heads: int, kv_heads: int, *, sparse: bool, local_block: int, block: int, top_k: int):
        super().__init__()
        if dim % heads or heads % kv_heads:
            raise ValueError(f"dim {dim}, heads {heads}, kv_heads {kv_heads} do not divide")
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.sparse, self.local_block, self.block, self.top_k = sparse, local_block, block, top_k
        self.q = nn.Linear(dim, dim, bias=False)
        self.kv = nn.Linear(dim, 2 * kv_heads * self.head_dim, bias=False)
        self.gate = nn.Linear(dim, 3 * heads)
        self.out = nn.Linear(dim, dim, bias=False)
        self.fixed_gates: tuple[float, float, float] | None = None

    def core(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Attention on (B, H, N, D) queries and (B, Hkv, N, D) keys/values; ``x`` feeds the gates."""
        if not self.sparse:
            return dense_attention(q, expand_kv(k, self.heads), expand_kv(v, self.heads))
        b, n = x.shape[:2]
        if self.fixed_gates is not None:
            gates = torch.tensor(self.fixed_gates, dtype=q.dtype).view(1, 1, 1, 3, 1).expand(b, self.heads, n, 3, 1)
        else:
            gates = self.gate(x).view(b, n, self.heads, 3).softmax(-1).permute(0, 2, 1, 3)[..., None]
        kf, vf = expand_kv(k, self.heads), expand_kv(v, self.heads)
        out = gates[..., 0, :] * local_branch(q, kf, vf, self.local_block)
        out = out + gates[..., 1, :] * compressed_branch(q, kf, vf, self.block)
        return out + gates[..., 2, :] * selected_branch(q, k, v, self.block, self.top_k)

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        b, n, _ = x.shape
        q = self.q(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(x).view(b, n, 2, self.kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = apply_rope(q, *rope), apply_rope(k, *rope)
        return self.out(self.core(q, k, v, x).transpose(1, 2).reshape(b, n, -1))


def rope_angles(lat_deg: torch.Tensor, lon_deg: torch.Tensor, head_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin (N, head_dim/2) of 2-D rotary positions: half the pairs turn with longitude, half with latitude.

    Integer frequencies keep the longitude rotation periodic on the sphere.
    """
    pairs = head_dim // 2
    freqs = torch.arange(1, pairs // 2 + 1, dtype=torch.float32)
    lon = torch.deg2rad(lon_deg)[:, None] * freqs
    lat = torch.deg2rad(lat_deg)[:, None] * freqs
    angles = torch.cat([lon, lat, torch.zeros(lon.shape[0], pairs - 2 * freqs.numel())], dim=1)
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)
