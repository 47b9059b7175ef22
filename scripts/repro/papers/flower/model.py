"""Flower-lite: multihead warps, pointwise channel mixing and a multiscale scaffold (torch).

- ``warp``: periodic bilinear sampling of a field at x + displacement(x), one source coordinate per
  point and head (the nonlocality of a Flower comes only from where it samples);
- :class:`SelfWarp`: per head h a value v_h(x) = W_h u(x) (a 1x1 projection) and a displacement
  rho_h(x) = MLP(u(x)) (1x1 -> ReLU -> 1x1, no spatial aggregation); output head h = v_h(x + rho_h(x));
  heads concatenated and mixed pointwise. The displacement head starts at zero, so a fresh SelfWarp
  samples in place;
- :class:`FlowerBlock`: GELU(Norm(SelfWarp(u) + W u)) with a pointwise channel norm;
- :class:`Flower`: lift, blocks at each level of a U-shaped scaffold whose transitions are 2x average
  pooling / nearest upsampling followed by 1x1 maps, skip concatenation, pointwise head.
No Fourier multipliers, attention or convolution kernels wider than one point anywhere in the model.
Displacements are in grid cells of their level; for 1-D fields (height 1) only the x displacement is used.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def warp(values: torch.Tensor, displacement: torch.Tensor, periodic: bool = True) -> torch.Tensor:
    """values (B, C, H, W) sampled at (y + dy, x + dx) with bilinear interpolation, periodic or (``periodic=False``)
    holding the edge value beyond the boundary.

    ``displacement`` (B, 2, H, W) holds (dx, dy) in grid cells.
    """
    b, c, h, w = values.shape
    ys = torch.arange(h, device=values.device, dtype=values.dtype).view(1, h, 1)
    xs = torch.arange(w, device=values.device, dtype=values.dtype).view(1, 1, w)
    px, py = xs + displacement[:, 0], ys + displacement[:, 1]
    x0, y0 = torch.floor(px), torch.floor(py)
    fx, fy = (px - x0)[:, None], (py - y0)[:, None]
    x0, y0 = x0.long(), y0.long()
    flat = values.reshape(b, c, h * w)

    def corner(yi: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
        yi, xi = (yi % h, xi % w) if periodic else (yi.clamp(0, h - 1), xi.clamp(0, w - 1))
        index = (yi * w + xi).reshape(b, 1, h * w).expand(b, c, h * w)
        return torch.gather(flat, 2, index).reshape(b, c, h, w)

    top = corner(y0, x0) * (1 - fx) + corner(y0, x0 + 1) * fx
    bottom = corner(y0 + 1, x0) * (1 - fx) + corner(y0 + 1, x0 + 1) * fx
    return top * (1 - fy) + bottom * fy


class Pointwise(nn.Linear):
    """A 1x1 map over channels, (B, C, H, W) -> (B, C', H, W), as a matrix product (much faster than a
    1x1 convolution on CPU)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bchw,oc->bohw", x, self.weight) + self.bias[:, None, None]


class ChannelNorm(nn.Module):
    """Layer norm over channels at each point (pointwise: no statistics across space)."""

    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class SelfWarp(nn.Module):
    def __init__(self, width: int, heads: int, hidden: int | None = None, periodic: bool = True):
        super().__init__()
        if width % heads:
            raise ValueError(f"width {width} is not a multiple of heads {heads}")
        self.heads, self.periodic = heads, periodic
        self.value = Pointwise(width, width)
        hidden = hidden or width
        self.displacement = nn.Sequential(Pointwise(width, hidden), nn.ReLU(), Pointwise(hidden, 2 * heads))
        nn.init.zeros_(self.displacement[-1].weight)
        nn.init.zeros_(self.displacement[-1].bias)
        self.mix = Pointwise(width, width)

    def displacements(self, u: torch.Tensor) -> torch.Tensor:
        """(B, heads, 2, H, W) displacement (dx, dy) in cells; dy = 0 on 1-D fields."""
        b, _, h, w = u.shape
        rho = self.displacement(u).reshape(b, self.heads, 2, h, w)
        if h == 1:
            rho = torch.stack([rho[:, :, 0], torch.zeros_like(rho[:, :, 1])], dim=2)
        return rho

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        b, c, h, w = u.shape
        values = self.value(u).reshape(b * self.heads, c // self.heads, h, w)
        rho = self.displacements(u).reshape(b * self.heads, 2, h, w)
        return self.mix(warp(values, rho, self.periodic).reshape(b, c, h, w))


class FlowerBlock(nn.Module):
    def __init__(self, width: int, heads: int, periodic: bool = True):
        super().__init__()
        self.warp = SelfWarp(width, heads, periodic=periodic)
        self.identity = Pointwise(width, width)
        self.norm = ChannelNorm(width)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.norm(self.warp(u) + self.identity(u)))


def pool_size(x: torch.Tensor) -> tuple[int, int]:
    return (2 if x.shape[-2] > 1 else 1, 2)


class Flower(nn.Module):
    """U-shaped scaffold of FlowerBlocks: ``levels`` resolutions, ``blocks`` blocks per level and side."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        width: int = 16,
        heads: int = 4,
        levels: int = 2,
        blocks: int = 1,
        periodic: bool = True,
    ):
        super().__init__()
        widths = [width * 2**i for i in range(levels)]
        self.lift = Pointwise(in_channels, width)
        self.down_blocks = nn.ModuleList(
            nn.Sequential(*[FlowerBlock(wd, heads, periodic) for _ in range(blocks)]) for wd in widths
        )
        self.down = nn.ModuleList(Pointwise(a, b) for a, b in zip(widths[:-1], widths[1:]))
        self.up = nn.ModuleList(Pointwise(b, a) for a, b in zip(widths[:-1], widths[1:]))
        self.merge = nn.ModuleList(Pointwise(2 * a, a) for a in widths[:-1])
        self.up_blocks = nn.ModuleList(
            nn.Sequential(*[FlowerBlock(wd, heads, periodic) for _ in range(blocks)]) for wd in widths[:-1]
        )
        self.head = nn.Sequential(Pointwise(width, 2 * width), nn.GELU(), Pointwise(2 * width, out_channels))

    def first_warp(self) -> SelfWarp:
        return self.down_blocks[0][0].warp

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.lift(x)
        skips = []
        for i, block in enumerate(self.down_blocks):
            z = block(z)
            if i < len(self.down):
                skips.append(z)
                z = self.down[i](F.avg_pool2d(z, pool_size(z)))
        for i in reversed(range(len(self.up))):
            skip = skips[i]
            z = self.up[i](F.interpolate(z, size=skip.shape[-2:], mode="nearest"))
            z = self.up_blocks[i](self.merge[i](torch.cat([z, skip], dim=1)))
        return self.head(z)
