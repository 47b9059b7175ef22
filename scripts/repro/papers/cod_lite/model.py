"""CoD-Lite's networks at small scale: analysis transform, factorised entropy model, MSE synthesis
transform and the pixel-space conditional convolutional diffusion decoder (x-prediction).

Images are float tensors (N, 3, H, W) in [-1, 1]. The latent is scalar-quantised to integers in
[-levels, levels]; the entropy model gives each channel a learned categorical distribution over those
integers, which the range coder (repro.papers.cod_lite.coding) uses to write the bits.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


class Encoder(nn.Module):
    """Analysis transform: a stride-``ds`` patch convolution, residual convolutions at the latent
    resolution, and a projection to ``latent`` channels (``ds`` x downsampling)."""

    def __init__(self, width: int, latent: int, ds: int, blocks: int = 1):
        super().__init__()
        self.stem = nn.Conv2d(3, width, ds, stride=ds)
        self.body = nn.Sequential(*(Residual(width) for _ in range(blocks)))
        self.out = nn.Conv2d(width, latent, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.gelu(self.body(self.stem(x))))


class Residual(nn.Module):
    """Plain residual conv block (no time input)."""

    def __init__(self, width: int):
        super().__init__()
        self.conv1 = nn.Conv2d(width, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + self.conv2(F.gelu(self.conv1(F.gelu(h))))


class EntropyModel(nn.Module):
    """A learned factorised prior: per channel, a categorical distribution over {-levels, ..., levels}."""

    def __init__(self, channels: int, levels: int):
        super().__init__()
        self.levels = levels
        self.logits = nn.Parameter(
            -0.5 * torch.arange(-levels, levels + 1, dtype=torch.float32).abs().repeat(channels, 1)
        )

    def pmf(self) -> torch.Tensor:
        """(channels, 2 * levels + 1) probabilities."""
        return torch.softmax(self.logits, dim=-1)

    def bits(self, y: torch.Tensor) -> torch.Tensor:
        """Differentiable code length (bits) of a continuous latent (N, C, h, w): -log2 of the pmf linearly
        interpolated between the two nearest integers (with additive uniform noise in training this is a
        smooth stand-in for the rate of the rounded latent; at integers it is the exact ideal code length)."""
        pos = (y.clamp(-self.levels, self.levels) + self.levels).permute(1, 0, 2, 3).reshape(y.shape[1], -1)
        low = pos.floor().clamp(max=2 * self.levels - 1)
        frac = pos - low
        pmf = self.pmf()
        p = (1 - frac) * pmf.gather(1, low.long()) + frac * pmf.gather(1, low.long() + 1)
        return -torch.log2(p.clamp_min(1e-9)).sum()


def quantise(y: torch.Tensor, levels: int) -> torch.Tensor:
    """Round to integers in [-levels, levels] with a straight-through gradient."""
    y = y.clamp(-levels, levels)
    return y + (torch.round(y) - y).detach()


class Synthesis(nn.Module):
    """MSE decoder: residual convolutions at the latent resolution and a pixel-shuffle head (``ds`` x up)."""

    def __init__(self, width: int, latent: int, ds: int, blocks: int):
        super().__init__()
        self.ds = ds
        self.stem = nn.Conv2d(latent, width, 3, padding=1)
        self.body = nn.Sequential(*(Residual(width) for _ in range(blocks)))
        self.head = nn.Conv2d(width, 3 * ds * ds, 3, padding=1)

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        return F.pixel_shuffle(self.head(F.gelu(self.body(self.stem(q)))), self.ds)


class Block(nn.Module):
    """Residual conv block with the time embedding as a per-channel scale and shift."""

    def __init__(self, width: int):
        super().__init__()
        self.conv1 = nn.Conv2d(width, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1)
        self.film = nn.Linear(width, 2 * width)

    def forward(self, h: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        scale, shift = self.film(temb)[:, :, None, None].chunk(2, dim=1)
        return h + self.conv2(F.gelu(self.conv1(F.gelu(h)) * (1 + scale) + shift))


class Denoiser(nn.Module):
    """Pixel-space conditional convolutional diffusion network predicting the clean image (x-prediction).

    The noisy image is patchified by a stride-``patch`` convolution (the paper's patch size 16, here small),
    the upsampled quantised latent is added to every block's input (the paper conditions 21 of 24 blocks),
    and a pixel-shuffle head returns to full resolution. ``cond_mask`` 0 drops the condition (the
    generation-oriented, unconditional pre-training).
    """

    def __init__(self, width: int, latent: int, ds: int, blocks: int, patch: int):
        super().__init__()
        self.ds, self.patch = ds, patch
        self.stem = nn.Conv2d(3, width, patch, stride=patch)
        self.cond = nn.Conv2d(latent, width, 3, padding=1)
        self.time = nn.Sequential(nn.Linear(16, width), nn.GELU(), nn.Linear(width, width))
        self.blocks = nn.ModuleList(Block(width) for _ in range(blocks))
        self.head = nn.Conv2d(width, 3 * patch * patch, 3, padding=1)

    def embed_time(self, t: torch.Tensor) -> torch.Tensor:
        freqs = torch.exp(torch.arange(8, dtype=torch.float32, device=t.device) * -math.log(1000.0) / 8)
        angles = 1000.0 * t[:, None] * freqs[None]
        return self.time(torch.cat([torch.sin(angles), torch.cos(angles)], dim=1))

    def forward(self, x_t: torch.Tensor, t: torch.Tensor, q: torch.Tensor, cond_mask: float = 1.0) -> torch.Tensor:
        h = self.stem(x_t)
        c = self.cond(q) * cond_mask
        if c.shape[-1] != h.shape[-1]:
            c = F.interpolate(c, size=h.shape[-2:], mode="nearest")
        temb = self.embed_time(t)
        for block in self.blocks:
            h = block(h + c, temb)
        return F.pixel_shuffle(self.head(F.gelu(h)), self.patch)


def noisy(x: torch.Tensor, t: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """Rectified-flow interpolation x_t = (1 - t) x + t noise (t = 1 is pure noise)."""
    return (1 - t)[:, None, None, None] * x + t[:, None, None, None] * noise


def lognormal_t(n: int, device=None) -> torch.Tensor:
    """Logit-normal timesteps (the paper's lognormal sampling): sigmoid of a standard normal."""
    return torch.sigmoid(torch.randn(n, device=device))


@torch.no_grad()
def sample(net: Denoiser, q: torch.Tensor, noise: torch.Tensor, steps: int) -> torch.Tensor:
    """Euler sampler from t = 1 to 0 in ``steps`` uniform steps on the x-prediction's velocity; one step
    is the one-step decoder's single forward pass."""
    x = noise
    ts = torch.linspace(1.0, 0.0, steps + 1)
    for t, s in zip(ts[:-1], ts[1:]):
        x0 = net(x, t.expand(len(x)), q)
        x = x0 + (s / t) * (x - x0)
    return x
