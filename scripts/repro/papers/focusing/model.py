"""The sparse-voxel 3D VAE and its differentiable depth / mask renderer (torch).

Encoder: 3-D convolutions from the input occupancy ((f n)^3, f fine voxels per latent cell) to a Gaussian
latent on the n^3 cell grid. Decoder: per *active* cell, an MLP of the cell's latent and its 26 neighbours'
predicts the f^3 densities of that cell's fine voxels; inactive cells are empty and never computed, so the
decoder's cost and memory follow the active-cell count (the sparse-voxel structure). Rendering: rays are
clipped to the grid's cube, sampled at fixed fractions, and composited (alpha from density times step); in
training the sparse renderer composites only the samples inside active cells (packed per ray), so rendering
cost follows the active cells too; the dense renderer (held-out prediction, the checks) reads a full grid.
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

    def decode_cells(self, z: torch.Tensor, active: torch.Tensor, voxel_size: float) -> torch.Tensor:
        """Densities (A, f^3) (per unit length) of the fine voxels of the A active cells (row-major cell order),
        from each cell's latent and its 26 neighbours'; inactive cells are never computed."""
        n = z.shape[-1]
        padded = F.pad(z, (1, 1, 1, 1, 1, 1))
        idx = torch.nonzero(active.reshape(-1)).squeeze(1)
        i, j, k = idx // (n * n), (idx // n) % n, idx % n
        feats = torch.cat(
            [padded[:, i + dx, j + dy, k + dz] for dx in range(3) for dy in range(3) for dz in range(3)], dim=0
        ).T
        return F.softplus(self.decoder(feats) - 2.0) / voxel_size

    def decode(self, z: torch.Tensor, active: torch.Tensor, voxel_size: float) -> torch.Tensor:
        """Dense density grid (R, R, R) from the latent: the active cells decoded, the rest zero."""
        return cells_to_grid(self.decode_cells(z, active, voxel_size), active, self.fine)


def cells_to_grid(cells: torch.Tensor, active: torch.Tensor, fine: int) -> torch.Tensor:
    """The dense grid (R, R, R) holding the active cells' fine densities ``cells`` (A, f^3), zero elsewhere."""
    n, f = active.shape[0], fine
    idx = torch.nonzero(active.reshape(-1)).squeeze(1)
    grid = torch.zeros(n**3, f**3, dtype=cells.dtype, device=cells.device).index_copy(0, idx, cells)
    return grid.view(n, n, n, f, f, f).permute(0, 3, 1, 4, 2, 5).reshape(n * f, n * f, n * f)


def box_interval(origins: torch.Tensor, dirs: torch.Tensor, lo: torch.Tensor, size: float):
    """Entry and exit distances of rays through the cube [lo, lo + size]^3 (exit <= entry: a miss)."""
    inv = 1.0 / torch.where(dirs.abs() < 1e-9, torch.full_like(dirs, 1e-9), dirs)
    t1, t2 = (lo - origins) * inv, (lo + size - origins) * inv
    return torch.minimum(t1, t2).amax(dim=1).clamp_min(0.0), torch.maximum(t1, t2).amin(dim=1)


def _samples(origins, dirs, lo, size, samples, dtype):
    t0, t1 = box_interval(origins, dirs, lo, size)
    hit = t1 > t0
    frac = (torch.arange(samples, device=origins.device, dtype=dtype) + 0.5) / samples
    t = t0[:, None] + (t1 - t0).clamp_min(0)[:, None] * frac[None]
    delta = ((t1 - t0).clamp_min(0) / samples)[:, None]
    return t, delta, hit


def render(
    sigma: torch.Tensor,
    lo: torch.Tensor,
    size: float,
    origins: torch.Tensor,
    dirs: torch.Tensor,
    samples: int,
    active: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Expected ray distance and opacity per ray through a dense density grid (R, R, R): rays clipped to the
    cube, fixed-fraction samples, alpha compositing. With ``active`` (n, n, n) samples outside active cells
    count as empty."""
    res = sigma.shape[0]
    t, delta, hit = _samples(origins, dirs, lo, size, samples, sigma.dtype)
    pts = origins[:, None] + t[..., None] * dirs[:, None]
    idx = ((pts - lo) / size * res).floor().long().clamp(0, res - 1)
    flat = (idx[..., 0] * res + idx[..., 1]) * res + idx[..., 2]
    keep = hit[:, None].expand_as(t)
    if active is not None:
        cell = idx // (res // active.shape[0])
        keep = keep & active[cell[..., 0], cell[..., 1], cell[..., 2]]
    sig = sigma.reshape(-1)[flat] * keep
    tau = sig * delta
    trans = torch.exp(-(torch.cumsum(tau, dim=1) - tau))
    w = trans * (1 - torch.exp(-tau))
    opacity = w.sum(dim=1)
    depth = (w * t).sum(dim=1) / opacity.clamp_min(1e-6)
    return depth, opacity


def render_sparse(
    cells: torch.Tensor,
    active: torch.Tensor,
    fine: int,
    lo: torch.Tensor,
    size: float,
    origins: torch.Tensor,
    dirs: torch.Tensor,
    samples: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same rendering from the active cells' densities only (``cells`` (A, f^3), from
    :meth:`VoxelVAE.decode_cells`): the samples inside active cells are packed (ray-major) and composited with a
    per-ray exclusive cumulative sum, so that cost and memory follow the samples in active cells, as in a
    sparse-voxel renderer; no dense grid is built."""
    n = active.shape[0]
    res, rays = n * fine, len(origins)
    t, delta, hit = _samples(origins, dirs, lo, size, samples, cells.dtype)
    with torch.no_grad():
        pts = origins[:, None] + t[..., None] * dirs[:, None]
        idx = ((pts - lo) / size * res).floor().long().clamp(0, res - 1)
        cell, sub = idx // fine, idx % fine
        table = torch.full((n**3,), -1, dtype=torch.long, device=cells.device)
        table[torch.nonzero(active.reshape(-1)).squeeze(1)] = torch.arange(len(cells), device=cells.device)
        row = table[(cell[..., 0] * n + cell[..., 1]) * n + cell[..., 2]]
        keep = (row >= 0) & hit[:, None]
        ray_id, sample_id = torch.nonzero(keep, as_tuple=True)
        sub_id = ((sub[..., 0] * fine + sub[..., 1]) * fine + sub[..., 2])[keep]
        counts = torch.bincount(ray_id, minlength=rays)
        starts = torch.cumsum(counts, 0) - counts
    tau = cells[row[keep], sub_id] * delta[ray_id, 0]
    before = (torch.cumsum(tau.double(), 0) - tau.double()).to(tau.dtype)
    base = before[starts[ray_id]]
    w = torch.exp(-(before - base)) * (1 - torch.exp(-tau))
    opacity = torch.zeros(rays, dtype=w.dtype, device=w.device).index_add(0, ray_id, w)
    moment = torch.zeros(rays, dtype=w.dtype, device=w.device).index_add(0, ray_id, w * t[ray_id, sample_id])
    return moment / opacity.clamp_min(1e-6), opacity


def depth_normals(depth: torch.Tensor, dirs: torch.Tensor) -> torch.Tensor:
    """Unit normals (H-1, W-1, 3) of the surface points o + depth * dir by finite differences."""
    pts = depth[..., None] * dirs
    dx, dy = pts[:-1, 1:] - pts[:-1, :-1], pts[1:, :-1] - pts[:-1, :-1]
    return F.normalize(torch.cross(dx, dy, dim=-1), dim=-1)
