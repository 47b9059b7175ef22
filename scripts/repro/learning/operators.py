"""Neural-operator baselines several papers compare against, written once (torch).

- :class:`FNO`: Fourier neural operator (Li et al. 2021): lift (fields + grid coordinates), spectral
  convolutions keeping ``modes`` frequencies per axis plus a pointwise path, GELU, project;
- :class:`UNet`: a small convolutional U-Net (two 3x3 convolutions per level, average-pool down,
  upsample + skip concatenation up);
- :class:`GalerkinTransformer`: attention over all points (Cao 2021): Galerkin-type linear attention
  Q (K^T V) / N with layer-normalised keys and values (``attention="softmax"`` gives ordinary dot-product
  attention over points, the quadratic reference in scaling checks).
All map (batch, channel, y, x) to (batch, out, y, x) and accept any grid size, including height 1 for
1-D fields; :func:`matched` picks the width giving a target parameter count, so that papers compare
models at matched size.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn


def count_parameters(model: nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters() if p.requires_grad))


def grid_coordinates(batch: int, h: int, w: int, device=None) -> torch.Tensor:
    """Cell coordinates in [0, 1) of an h x w grid, shape (batch, 2, h, w) with channels (x, y)."""
    ys = torch.arange(h, device=device, dtype=torch.float32) / h
    xs = torch.arange(w, device=device, dtype=torch.float32) / w
    yy, xx = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([xx, yy]).expand(batch, 2, h, w)


class SpectralConv2d(nn.Module):
    """Multiply the lowest ``modes`` Fourier coefficients per axis by learned complex matrices."""

    def __init__(self, width: int, modes: int):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (width * width)
        self.w_pos = nn.Parameter(scale * torch.randn(width, width, modes, modes, dtype=torch.cfloat))
        self.w_neg = nn.Parameter(scale * torch.randn(width, width, modes, modes, dtype=torch.cfloat))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        x_ft = torch.fft.rfft2(x)
        out = torch.zeros(b, c, h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        mx = min(self.modes, w // 2 + 1)
        my = min(self.modes, max(h // 2, 1))
        mult = "bixy,ioxy->boxy"
        out[:, :, :my, :mx] = torch.einsum(mult, x_ft[:, :, :my, :mx], self.w_pos[:, :, :my, :mx])
        if h > 1:
            out[:, :, -my:, :mx] = torch.einsum(mult, x_ft[:, :, -my:, :mx], self.w_neg[:, :, :my, :mx])
        return torch.fft.irfft2(out, s=(h, w))


class FNO(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, width: int = 24, modes: int = 8, layers: int = 4):
        super().__init__()
        self.lift = nn.Conv2d(in_channels + 2, width, 1)
        self.spectral = nn.ModuleList(SpectralConv2d(width, modes) for _ in range(layers))
        self.pointwise = nn.ModuleList(nn.Conv2d(width, width, 1) for _ in range(layers))
        self.project = nn.Sequential(nn.Conv2d(width, 2 * width, 1), nn.GELU(), nn.Conv2d(2 * width, out_channels, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, _, h, w = x.shape
        z = self.lift(torch.cat([x, grid_coordinates(b, h, w, x.device)], dim=1))
        for i, (spec, point) in enumerate(zip(self.spectral, self.pointwise)):
            z = spec(z) + point(z)
            if i < len(self.spectral) - 1:
                z = F.gelu(z)
        return self.project(z)


class ConvBlock(nn.Sequential):
    def __init__(self, cin: int, cout: int, padding_mode: str):
        super().__init__(
            nn.Conv2d(cin, cout, 3, padding=1, padding_mode=padding_mode),
            nn.GELU(),
            nn.Conv2d(cout, cout, 3, padding=1, padding_mode=padding_mode),
            nn.GELU(),
        )


class UNet(nn.Module):
    """Levels of width, 2 width, ...; pools only along axes longer than one cell (1-D fields keep height 1)."""

    def __init__(self, in_channels: int, out_channels: int, width: int = 16, levels: int = 2, periodic: bool = True):
        super().__init__()
        mode = "circular" if periodic else "zeros"
        widths = [width * 2**i for i in range(levels + 1)]
        self.down = nn.ModuleList(
            ConvBlock(cin, cout, mode) for cin, cout in zip([in_channels] + widths[:-2], widths[:-1])
        )
        self.bottom = ConvBlock(widths[-2], widths[-1], mode)
        self.up = nn.ModuleList(ConvBlock(widths[i + 1] + widths[i], widths[i], mode) for i in reversed(range(levels)))
        self.head = nn.Conv2d(width, out_channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = F.avg_pool2d(x, (2 if x.shape[-2] > 1 else 1, 2))
        x = self.bottom(x)
        for block, skip in zip(self.up, reversed(skips)):
            x = F.interpolate(x, size=skip.shape[-2:], mode="nearest")
            x = block(torch.cat([x, skip], dim=1))
        return self.head(x)


class PointAttention(nn.Module):
    """One attention layer over all points: Galerkin linear attention or softmax dot-product attention."""

    def __init__(self, dim: int, heads: int, attention: str):
        super().__init__()
        if attention not in ("galerkin", "softmax"):
            raise ValueError(f"attention must be 'galerkin' or 'softmax', got {attention!r}")
        self.heads, self.attention = heads, attention
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm_k = nn.LayerNorm(dim // heads)
        self.norm_v = nn.LayerNorm(dim // heads)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if self.attention == "softmax":
            mixed = F.scaled_dot_product_attention(q, k, v)
        else:
            k, v = self.norm_k(k), self.norm_v(v)
            mixed = q @ (k.transpose(-2, -1) @ v) / n
        return self.out(mixed.transpose(1, 2).reshape(b, n, d))


class GalerkinTransformer(nn.Module):
    """Tokens = points with their field values and coordinates; attention layers with FFNs; pointwise head."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        width: int = 32,
        layers: int = 3,
        heads: int = 4,
        attention: str = "galerkin",
    ):
        super().__init__()
        self.lift = nn.Linear(in_channels + 2, width)
        self.attn = nn.ModuleList(PointAttention(width, heads, attention) for _ in range(layers))
        self.ffn = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
            for _ in range(layers)
        )
        self.head = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, out_channels))

    def forward_points(self, values: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """(batch, points, in) values at (batch, points, 2) coordinates -> (batch, points, out)."""
        z = self.lift(torch.cat([values, coords], dim=-1))
        for attn, ffn in zip(self.attn, self.ffn):
            z = z + attn(z)
            z = z + ffn(z)
        return self.head(z)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        coords = grid_coordinates(b, h, w, x.device).flatten(2).transpose(1, 2)
        out = self.forward_points(x.flatten(2).transpose(1, 2), coords)
        return out.transpose(1, 2).reshape(b, -1, h, w)


BASELINES: dict[str, Callable[..., nn.Module]] = {
    "fno": lambda cin, cout, width, **kw: FNO(cin, cout, width=width, **kw),
    "unet": lambda cin, cout, width, **kw: UNet(cin, cout, width=width, **kw),
    "galerkin": lambda cin, cout, width, **kw: GalerkinTransformer(cin, cout, width=4 * max(width // 4, 1), **kw),
}


def matched(
    build: Callable[[int], nn.Module], target_params: int, widths: range = range(4, 257, 2)
) -> tuple[nn.Module, int]:
    """The model ``build(width)`` whose parameter count is closest to ``target_params``, and its width.

    Bisection over ``widths`` (parameter counts grow with width), so only a few models are built.
    """
    lo, hi = 0, len(widths) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if count_parameters(build(widths[mid])) < target_params:
            lo = mid + 1
        else:
            hi = mid
    candidates = [widths[i] for i in (lo - 1, lo) if 0 <= i < len(widths)]
    best = min(candidates, key=lambda w: abs(count_parameters(build(w)) - target_params))
    return build(best), best


def baseline(name: str, in_channels: int, out_channels: int, target_params: int, **kwargs) -> nn.Module:
    """A baseline operator by name ('fno', 'unet', 'galerkin') at about ``target_params`` parameters."""
    if name not in BASELINES:
        raise ValueError(f"unknown operator {name!r}; choose from {sorted(BASELINES)}")
    model, _ = matched(lambda w: BASELINES[name](in_channels, out_channels, w, **kwargs), target_params)
    return model
