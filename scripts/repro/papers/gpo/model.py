"""The Gaussian Particle Operator (GPO-lite): fields as weighted anisotropic Gaussians, basis to basis.

Per layer (Petrov-Galerkin):
- measurement: G learned test windows psi_g(x) = exp(-1/2 sum_d (x_d - mu_g,d)^2 / s_g,d^2) (diagonal
  scales clamped to [sigma_min, sigma_max], centres in the unit square, wrapped distances on a periodic
  domain) aggregate point features: z_g = sum_j psi_g(x_j) a(x_j) / sum_j psi_g(x_j), cost O(N G);
- processor: PG Gaussian attention, softmax self-attention among the G modal tokens (O(G^2)) and an FFN;
- reconstruction: the tokens are the weights of a second (trial) Gaussian basis phi_g evaluated at any
  query points, u(x) = sum_g z_g phi_g(x), added to a pointwise path. Nothing depends on a grid, so the
  same weights run on 16x16, 32x32, 64x64 grids or on irregular point subsets.
A centre-alignment term pulls each window centre toward the |u|-weighted centroid of what it measures,
so that particle positions mean something (``alignment_loss``; form reconstructed, see docs).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class GaussianBasis(nn.Module):
    """G anisotropic Gaussians in the unit square with learned centres and clamped diagonal scales."""

    def __init__(self, particles: int, sigma_min: float, sigma_max: float, periodic: bool, seed_offset: float = 0.0):
        super().__init__()
        side = int(round(particles**0.5))
        grid = (torch.arange(particles) % side + 0.5) / side, (torch.arange(particles) // side + 0.5) / side
        start = torch.stack(grid, dim=-1).clamp(0.02, 0.98) + seed_offset
        self.mu_raw = nn.Parameter(torch.logit(start.clamp(0.02, 0.98)))
        self.sigma_raw = nn.Parameter(torch.zeros(particles, 2))
        self.sigma_min, self.sigma_max, self.periodic = sigma_min, sigma_max, periodic

    @property
    def centres(self) -> torch.Tensor:
        return torch.sigmoid(self.mu_raw)

    @property
    def scales(self) -> torch.Tensor:
        return self.sigma_min + (self.sigma_max - self.sigma_min) * torch.sigmoid(self.sigma_raw)

    def __call__(self, coords: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return super().__call__(coords)

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        """Basis values (batch, points, G) at coordinates (batch, points, 2) (batch may be 1, shared)."""
        diff = coords[:, :, None, :] - self.centres[None, None]
        if self.periodic:
            diff = diff - torch.round(diff)
        return torch.exp(-0.5 * ((diff / self.scales) ** 2).sum(-1))


class GPOLayer(nn.Module):
    def __init__(self, width: int, particles: int, heads: int, sigma: tuple[float, float], periodic: bool):
        super().__init__()
        self.test = GaussianBasis(particles, *sigma, periodic)
        self.trial = GaussianBasis(particles, *sigma, periodic, seed_offset=0.5 / particles**0.5)
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.pointwise = nn.Linear(width, width)

    def measure(self, features: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """Petrov-Galerkin measurement: window-normalised averages of point features, (batch, G, width)."""
        psi = self.test(coords)
        return (psi.transpose(1, 2) @ features) / (psi.sum(1)[..., None] + 1e-6)

    def process(self, z: torch.Tensor) -> torch.Tensor:
        h = self.norm1(z)
        z = z + self.attn(h, h, h, need_weights=False)[0]
        return z + self.ffn(self.norm2(z))

    def reconstruct(self, z: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """sum_g z_g phi_g(x) at any query points (batch, points, width)."""
        return self.trial(coords) @ z

    def forward(self, features: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        z = self.process(self.measure(features, coords))
        return F.gelu(self.pointwise(features) + self.reconstruct(z, coords))


class GPO(nn.Module):
    """Lift (values, coordinates) pointwise, GPO layers, pointwise head; grids or point sets."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        width: int = 32,
        particles: int = 36,
        layers: int = 3,
        heads: int = 4,
        sigma: tuple[float, float] = (0.03, 0.3),
        periodic: bool = True,
    ):
        super().__init__()
        self.lift = nn.Linear(in_channels + 2, width)
        self.layers = nn.ModuleList(GPOLayer(width, particles, heads, sigma, periodic) for _ in range(layers))
        self.head = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, out_channels))

    def forward_points(self, values: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """(batch, points, in) values at coordinates (batch or 1, points, 2): a shared point set is
        passed with batch 1, so the Gaussians are evaluated once for the whole batch."""
        a = self.lift(torch.cat([values, coords.expand(values.shape[0], -1, -1)], dim=-1))
        for layer in self.layers:
            a = layer(a, coords)
        return self.head(a)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from repro.learning.operators import grid_coordinates

        b, _, h, w = x.shape
        coords = grid_coordinates(1, h, w, x.device).flatten(2).transpose(1, 2)
        return self.forward_points(x.flatten(2).transpose(1, 2), coords).transpose(1, 2).reshape(b, -1, h, w)

    def alignment_loss(self, values: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """Mean squared distance of the first layer's window centres to the |u|-weighted centroid they see."""
        basis = self.layers[0].test
        weight = basis(coords) * values.abs().sum(-1, keepdim=True)
        centroid = (weight.transpose(1, 2) @ coords) / (weight.sum(1)[..., None] + 1e-6)
        return ((basis.centres[None] - centroid.detach()) ** 2).sum(-1).mean()
