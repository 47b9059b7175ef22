"""CoD-Lite's networks at small scale: the condition codec (analysis transform and vector quantiser), the
MSE synthesis transform, the pixel-space conditional convolutional diffusion decoder (x-prediction) and the
discriminator of the one-step student's adversarial term.

Images are float tensors (N, 3, H, W) in [-1, 1]. The analysis transform downsamples by ``ds``; each latent
vector is replaced by its nearest entry of a codebook of 2^bits vectors (straight-through gradient), and
the entry's index is what the bitstream holds, written at fixed length (repro.papers.cod_lite.coding), so the
rate is bits / ds^2 per pixel, as in the paper's condition codec.
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


class VectorQuantiser(nn.Module):
    """A codebook of 2^bits vectors: nearest-entry indices, their vectors, and the VQ-VAE losses."""

    def __init__(self, bits: int, dim: int):
        super().__init__()
        self.bits = bits
        self.codebook = nn.Parameter(torch.randn(2**bits, dim) * 0.1)

    def indices(self, y: torch.Tensor) -> torch.Tensor:
        """Index (N, h, w) of the nearest codebook vector of each latent vector of y (N, dim, h, w)."""
        flat = y.permute(0, 2, 3, 1).reshape(-1, y.shape[1])
        dist = (flat**2).sum(1, keepdim=True) - 2 * flat @ self.codebook.T + (self.codebook**2).sum(1)[None]
        return dist.argmin(dim=1).view(y.shape[0], y.shape[2], y.shape[3])

    def embed(self, idx: torch.Tensor) -> torch.Tensor:
        """The codebook vectors (N, dim, h, w) of indices (N, h, w): what every decoder is conditioned on."""
        return self.codebook[idx].permute(0, 3, 1, 2)

    def forward(self, y: torch.Tensor, beta: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(straight-through quantised y, indices, codebook + beta * commitment loss)."""
        idx = self.indices(y)
        q = self.embed(idx)
        loss = torch.mean((q - y.detach()) ** 2) + beta * torch.mean((q.detach() - y) ** 2)
        return y + (q - y).detach(), idx, loss


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
        if ds % patch:
            raise ValueError(f"the codec's downsampling {ds} must be a multiple of the patch size {patch}")
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
        if c.shape[-2:] != h.shape[-2:]:
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


class Discriminator(nn.Module):
    """The adversarial term's critic (a stand-in for the paper's projected GAN, whose pretrained feature network
    is not available offline): strided convolutions on the image with the upsampled condition, one logit per
    image."""

    def __init__(self, width: int, latent: int):
        super().__init__()
        self.cond = nn.Conv2d(latent, width, 1)
        self.stem = nn.Conv2d(3, width, 4, stride=2, padding=1)
        self.body = nn.Sequential(nn.LeakyReLU(0.2), nn.Conv2d(width, width, 4, stride=2, padding=1), nn.LeakyReLU(0.2))
        self.head = nn.Conv2d(width, 1, 3, padding=1)

    def forward(self, x: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        h = self.stem(x)
        h = h + F.interpolate(self.cond(q), size=h.shape[-2:], mode="nearest")
        return self.head(self.body(h)).mean(dim=(1, 2, 3))
