"""The sparse-voxel 3D VAE and its differentiable depth / mask renderer (torch).

Encoder: 3-D convolutions from the input occupancy ((f n)^3, f fine voxels per latent cell) to a Gaussian
latent on the n^3 cell grid. Decoder: per *active* cell, an MLP of the cell's latent and its 26 neighbours'
predicts the f^3 densities of that cell's fine voxels; inactive cells are empty and never computed, so the
decoder's cost and memory follow the active-cell count (the sparse-voxel structure). Rendering: rays are
clipped to the grid's cube, sampled at fixed fractions, and composited (alpha from density times step);
samples in inactive cells are skipped in the sparse path.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class VoxelVAE(nn.Module):
    def __init__(self, width: int, latent: int, hidden: int, fine: int):
        super().__init__()
        if fine != 4:
            raise ValueError("the encoder downsamples by 4: fine_per_cell must be 4")
        self.fine, self.latent = fine, latent
        self.encoder = nn.Sequential(
            nn.Conv3d(1, width, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv3d(width, width, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv3d(width, 2 * latent, 3, padding=1),
        )
        self.decoder = nn.Sequential(
            nn.Linear(27 * latent, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, fine**3)
        )

    def encode(self, voxels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and log-variance (latent, n, n, n) of the occupancy grid (R, R, R)."""
        out = self.encoder(voxels[None, None].float())[0]
        return out[: self.latent], out[self.latent :].clamp(-8, 8)

    def decode(self, z: torch.Tensor, active: torch.Tensor, voxel_size: float) -> torch.Tensor:
        """Density grid (R, R, R) (per unit length) from the latent; only ``active`` cells are decoded."""
        n = z.shape[-1]
        padded = F.pad(z, (1, 1, 1, 1, 1, 1))
        idx = torch.nonzero(active.reshape(-1)).squeeze(1)
        i, j, k = idx // (n * n), (idx // n) % n, idx % n
        feats = torch.cat(
            [padded[:, i + dx, j + dy, k + dz] for dx in range(3) for dy in range(3) for dz in range(3)], dim=0
        ).T
        sigma = F.softplus(self.decoder(feats) - 2.0) / voxel_size
        f = self.fine
        cells = torch.zeros(n**3, f**3, dtype=sigma.dtype, device=sigma.device).index_copy(0, idx, sigma)
        return cells.view(n, n, n, f, f, f).permute(0, 3, 1, 4, 2, 5).reshape(n * f, n * f, n * f)


def box_interval(origins: torch.Tensor, dirs: torch.Tensor, lo: torch.Tensor, size: float):
    """Entry and exit distances of rays through the cube [lo, lo + size]^3 (exit <= entry: a miss)."""
    inv = 1.0 / torch.where(dirs.abs() < 1e-9, torch.full_like(dirs, 1e-9), dirs)
    t1, t2 = (lo - origins) * inv, (lo + size - origins) * inv
    return torch.minimum(t1, t2).amax(dim=1).clamp_min(0.0), torch.maximum(t1, t2).amin(dim=1)


def render(
    sigma: torch.Tensor,
    lo: torch.Tensor,
    size: float,
    origins: torch.Tensor,
    dirs: torch.Tensor,
    samples: int,
    active: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Expected ray distance and opacity per ray. With ``active`` (n, n, n) only samples in active cells
    read the density grid (the sparse path); the rest count as empty."""
    res = sigma.shape[0]
    t0, t1 = box_interval(origins, dirs, lo, size)
    hit = (t1 > t0)[:, None]
    frac = (torch.arange(samples, device=sigma.device, dtype=sigma.dtype) + 0.5) / samples
    t = t0[:, None] + (t1 - t0).clamp_min(0)[:, None] * frac[None]
    delta = ((t1 - t0).clamp_min(0) / samples)[:, None]
    pts = origins[:, None] + t[..., None] * dirs[:, None]
    idx = ((pts - lo) / size * res).floor().long().clamp(0, res - 1)
    flat = (idx[..., 0] * res + idx[..., 1]) * res + idx[..., 2]
    if active is None:
        sig = sigma.reshape(-1)[flat] * hit
    else:
        n = active.shape[0]
        cell = idx // (res // n)
        keep = active[cell[..., 0], cell[..., 1], cell[..., 2]] & hit
        sig = torch.zeros_like(t).masked_scatter(keep, sigma.reshape(-1)[flat[keep]])
    tau = sig * delta
    trans = torch.exp(-(torch.cumsum(tau, dim=1) - tau))
    w = trans * (1 - torch.exp(-tau))
    opacity = w.sum(dim=1)
    depth = (w * t).sum(dim=1) / opacity.clamp_min(1e-6)
    return depth, opacity


def depth_normals(depth: torch.Tensor, dirs: torch.Tensor) -> torch.Tensor:
    """Unit normals (H-1, W-1, 3) of the surface points o + depth * dir by finite differences."""
    pts = depth[..., None] * dirs
    dx, dy = pts[:-1, 1:] - pts[:-1, :-1], pts[1:, :-1] - pts[:-1, :-1]
    return F.normalize(torch.cross(dx, dy, dim=-1), dim=-1)
