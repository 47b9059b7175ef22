"""Geo-NeW-lite: a learned reduced FE space on the mesh, a learned monotone flux, and a Newton solve whose
discrete conservation law holds exactly; plus the regression baseline that predicts u directly.

- Geometry encoder: a transformer over the mesh nodes (features: normalised coordinates, boundary and
  Dirichlet flags); K learned queries cross-attend to it and give K coarse tokens and a pooled latent.
- Learned space (partition of unity): every free fine node a distributes itself over the K coarse tokens
  by a softmax of attention scores, W[1:, a]; Dirichlet nodes form the fixed coarse function psi_0. Hence
  sum_i W[i, a] = 1 at every node and psi_i = sum_a W[i, a] phi_a is a partition of unity. Whitney 1-forms
  psi_ij = psi_i grad psi_j - psi_j grad psi_i span the coarse gradients, and the coarse exterior derivative
  is the incidence of the complete coarse graph.
- Constitutive model: F(g) = grad_g Phi(g; latent) with Phi = eps/2 |g|^2 + 1/2 |L^T g|^2
  + sum_j s_j softplus(w_j . g + b_j), s_j >= 0: convex in g, so dF/dg >= eps I (symmetric positive definite)
  and the coarse problem is the minimisation of a strictly convex potential: a unique solution exists.
- Solve: Newton with backtracking on that potential; gradients by the implicit function theorem,
  c = c* - J^{-1} R(c*; theta) with J detached (equals c* in value, has dc/dtheta = -J^{-1} dR/dtheta).
- Coarse residual: R_i = int F(grad u_c) . grad psi_i - int f psi_i - int_{Gamma_N} g psi_i
  = sum_j F_ji - b_i with edge fluxes F_ji = int F . psi_ji (antisymmetric), so the equations telescope.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from repro.papers.geo_newf.fem import mass_matrix, p1_geometry


@dataclass
class MeshBatch:
    """Meshes of one topology stacked along the first dimension (float64 tensors)."""

    cells: torch.Tensor  # (m, 3) long
    grads: torch.Tensor  # (B, m, 3, 2)
    areas: torch.Tensor  # (B, m)
    dirichlet: torch.Tensor  # (B, n) 0/1
    load: torch.Tensor  # (B, n)
    features: torch.Tensor  # (B, n, 4) geometry features
    inputs: torch.Tensor  # (B, n, 6) geometry + source + load density (regression baseline)
    mass: torch.Tensor  # (B, n, n)
    u: torch.Tensor  # (B, n) reference solution

    def subset(self, idx: np.ndarray | list[int]) -> MeshBatch:
        idx = torch.as_tensor(np.asarray(idx), dtype=torch.long)
        return MeshBatch(self.cells, *(getattr(self, k)[idx] for k in _STACKED))


_STACKED = ("grads", "areas", "dirichlet", "load", "features", "inputs", "mass", "u")


def make_batch(samples: list[dict]) -> MeshBatch:
    """Stack samples of one topology (dicts of numpy arrays in the canonical layout)."""
    cells = samples[0]["cells"]
    if any(s["cells"].shape != cells.shape or not np.array_equal(s["cells"], cells) for s in samples):
        raise ValueError("make_batch needs meshes of one topology")
    cols = {k: [] for k in _STACKED}
    for s in samples:
        nodes = s["nodes"]
        grads, areas = p1_geometry(nodes, cells)
        mass = mass_matrix(nodes, cells)
        boundary = np.zeros(len(nodes))
        boundary[np.unique(s["facets"])] = 1.0
        centred = nodes - nodes.mean(0)
        centred = centred / np.max(np.abs(centred))
        features = np.column_stack([centred, boundary, s["dirichlet"].astype(float)])
        lumped = np.asarray(mass.sum(axis=1)).ravel()
        inputs = np.column_stack([features, s["source"] / 10.0, s["load"] / lumped / 10.0])
        for k, v in zip(
            _STACKED, (grads, areas, s["dirichlet"].astype(float), s["load"], features, inputs, mass.toarray(), s["u"])
        ):
            cols[k].append(v)
    return MeshBatch(torch.as_tensor(cells, dtype=torch.long), *(torch.as_tensor(np.stack(cols[k])) for k in _STACKED))


class Encoder(nn.Module):
    """Transformer over mesh nodes; ``queries`` learned tokens cross-attend to give coarse tokens."""

    def __init__(self, in_features: int, width: int, heads: int, layers: int, queries: int):
        super().__init__()
        self.embed = nn.Linear(in_features, width)
        layer = nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.queries = nn.Parameter(torch.randn(queries, width) / width**0.5) if queries else None
        self.cross = nn.MultiheadAttention(width, heads, batch_first=True) if queries else None

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        h = self.blocks(self.embed(x))
        if self.queries is None:
            return h, None
        q = self.queries.expand(len(x), -1, -1)
        tokens, _ = self.cross(q, h, h, need_weights=False)
        return h, tokens


class ConvexFlux(nn.Module):
    """F = grad Phi of a convex potential conditioned on a geometry latent; dF/dg >= eps I."""

    def __init__(self, width: int, ridges: int, eps: float):
        super().__init__()
        self.eps = eps
        self.w = nn.Parameter(torch.randn(ridges, 2))
        self.to_l = nn.Linear(width, 3)
        self.to_s = nn.Linear(width, ridges)
        self.to_b = nn.Linear(width, ridges)

    def params(self, latent: torch.Tensor):
        lv = self.to_l(latent)
        zero = torch.zeros_like(lv[:, 0])
        chol = torch.stack([torch.stack([1.0 + lv[:, 0], zero], -1), torch.stack([lv[:, 1], lv[:, 2]], -1)], -2)
        return chol @ chol.transpose(-1, -2), nn.functional.softplus(self.to_s(latent)), self.to_b(latent)

    def potential(self, g: torch.Tensor, p) -> torch.Tensor:
        a, s, b = p  # a (B, 2, 2), s (B, J), b (B, J); g (B, m, 2)
        z = g @ self.w.T + b[:, None]
        quad = 0.5 * self.eps * (g * g).sum(-1) + 0.5 * torch.einsum("bmi,bij,bmj->bm", g, a, g)
        return quad + (s[:, None] * nn.functional.softplus(z)).sum(-1)

    def flux(self, g: torch.Tensor, p) -> torch.Tensor:
        a, s, b = p
        z = g @ self.w.T + b[:, None]
        return self.eps * g + torch.einsum("bij,bmj->bmi", a, g) + (s[:, None] * torch.sigmoid(z)) @ self.w

    def jacobian(self, g: torch.Tensor, p) -> torch.Tensor:
        a, s, b = p
        z = g @ self.w.T + b[:, None]
        sig = torch.sigmoid(z)
        curv = s[:, None] * sig * (1 - sig)  # (B, m, J)
        ww = self.w[:, :, None] * self.w[:, None, :]  # (J, 2, 2)
        eye = torch.eye(2, dtype=g.dtype)
        return self.eps * eye + a[:, None] + torch.einsum("bmj,jkl->bmkl", curv, ww)


@dataclass
class Solution:
    coeffs: torch.Tensor  # (B, K)
    weights: torch.Tensor  # (B, K + 1, n), row 0 = Dirichlet function
    u: torch.Tensor  # (B, n)
    iterations: torch.Tensor  # (B,)
    converged: torch.Tensor  # (B,) bool
    residual: torch.Tensor  # (B, K) coarse residual at the returned solution
    load: torch.Tensor  # (B, K) coarse load b_i


class GeoNeW(nn.Module):
    def __init__(
        self, width: int, heads: int, layers: int, coarse: int, ridges: int, eps: float, tol: float, max_iter: int
    ):
        super().__init__()
        self.encoder = Encoder(4, width, heads, layers, coarse)
        self.key = nn.Linear(width, width)
        self.offset = nn.Linear(width, 2)
        side = int(np.ceil(np.sqrt(coarse)))
        grid = np.stack(np.meshgrid(*(np.linspace(-0.75, 0.75, side),) * 2), -1).reshape(-1, 2)[:coarse]
        self.register_buffer("base", torch.as_tensor(grid))
        self.log_width = nn.Parameter(torch.tensor(np.log(1.5 / side)))
        self.flux = ConvexFlux(width, ridges, eps)
        self.tol, self.max_iter = tol, max_iter

    def weights(self, batch: MeshBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """Partition of unity (B, K + 1, n) and the geometry latent (B, width)."""
        h, tokens = self.encoder(batch.features)
        # localised bumps around coarse centres the encoder places (a grid plus learned offsets), reshaped by
        # attention scores: a well-conditioned partition from the start of training
        centres = self.base + self.offset(tokens)  # (B, K, 2) in normalised coordinates
        xy = batch.features[..., :2]
        dist2 = ((xy[:, None] - centres[:, :, None]) ** 2).sum(-1)  # (B, K, n)
        scores = torch.einsum("bnd,bkd->bkn", self.key(h), tokens) / h.shape[-1] ** 0.5
        scores = scores - dist2 / torch.exp(2 * self.log_width)
        free = 1.0 - batch.dirichlet
        w = torch.softmax(scores, dim=1) * free[:, None]
        return torch.cat([batch.dirichlet[:, None], w], dim=1), tokens.mean(1)

    @staticmethod
    def coarse_gradients(weights: torch.Tensor, batch: MeshBatch) -> torch.Tensor:
        """grad psi_i on every triangle, (B, m, K + 1, 2)."""
        return torch.einsum("bkma,bmad->bmkd", weights[:, :, batch.cells], batch.grads)

    def residual(self, c: torch.Tensor, pg: torch.Tensor, load: torch.Tensor, batch: MeshBatch, p) -> torch.Tensor:
        g = torch.einsum("bk,bmkd->bmd", c, pg[:, :, 1:])
        return torch.einsum("bm,bmd,bmkd->bk", batch.areas, self.flux.flux(g, p), pg[:, :, 1:]) - load

    def forward(self, batch: MeshBatch) -> Solution:
        weights, latent = self.weights(batch)
        p = self.flux.params(latent)
        pg = self.coarse_gradients(weights, batch)
        load = torch.einsum("bkn,bn->bk", weights[:, 1:], batch.load)
        with torch.no_grad():
            c, iterations, converged = self._newton(pg.detach(), load.detach(), batch, tuple(t.detach() for t in p))
            jac = self._jacobian(c, pg.detach(), batch, tuple(t.detach() for t in p))
        res = self.residual(c, pg, load, batch, p)
        c_out = c - torch.linalg.solve(jac, res)  # implicit-function-theorem step: value c, exact gradient
        with torch.no_grad():
            final = self.residual(c_out, pg, load, batch, p)
        u = torch.einsum("bk,bkn->bn", c_out, weights[:, 1:])
        return Solution(c_out, weights, u, iterations, converged, final, load)

    def _jacobian(self, c, pg, batch, p):
        g = torch.einsum("bk,bmkd->bmd", c, pg[:, :, 1:])
        q = pg[:, :, 1:]
        return torch.einsum("bm,bmkd,bmde,bmle->bkl", batch.areas, q, self.flux.jacobian(g, p), q)

    def _energy(self, c, pg, load, batch, p):
        g = torch.einsum("bk,bmkd->bmd", c, pg[:, :, 1:])
        return (batch.areas * self.flux.potential(g, p)).sum(-1) - (c * load).sum(-1)

    def _newton(self, pg, load, batch, p):
        """Newton with backtracking on the strictly convex potential, per mesh of the batch."""
        bsz, k = load.shape
        c = torch.zeros(bsz, k, dtype=load.dtype, device=load.device)
        scale = load.abs().amax(-1).clamp_min(1e-300)
        iterations = torch.zeros(bsz, dtype=torch.long, device=load.device)
        converged = torch.zeros(bsz, dtype=torch.bool, device=load.device)
        energy = self._energy(c, pg, load, batch, p)
        for _ in range(self.max_iter):
            r = self.residual(c, pg, load, batch, p)
            converged = r.abs().amax(-1) <= self.tol * scale
            if converged.all():
                break
            step = -torch.linalg.solve(self._jacobian(c, pg, batch, p), r)
            step = torch.where(converged[:, None], torch.zeros_like(step), step)
            t = torch.ones(bsz, dtype=load.dtype, device=load.device)
            slope = (r * step).sum(-1)
            norm = r.abs().amax(-1)
            for _ in range(30):
                trial_c = c + t[:, None] * step
                trial = self._energy(trial_c, pg, load, batch, p)
                # Armijo on the potential, or (where the potential's decrease is below round-off) a
                # decrease of the residual
                ok = trial <= energy + 1e-4 * t * slope
                ok |= self.residual(trial_c, pg, load, batch, p).abs().amax(-1) <= (1 - 1e-4 * t) * norm
                if ok.all():
                    break
                t = torch.where(ok, t, 0.5 * t)
            c = c + t[:, None] * step
            energy = self._energy(c, pg, load, batch, p)
            iterations += (~converged).long()
        r = self.residual(c, pg, load, batch, p)
        return c, iterations, r.abs().amax(-1) <= self.tol * scale


def edge_fluxes(model: GeoNeW, batch: MeshBatch, sol: Solution) -> torch.Tensor:
    """Whitney edge fluxes F_ij = int F(grad u_c) . (psi_i grad psi_j - psi_j grad psi_i), (B, K + 1, K + 1)."""
    weights, latent = model.weights(batch)
    p = model.flux.params(latent)
    pg = model.coarse_gradients(weights, batch)
    flux = model.flux.flux(torch.einsum("bk,bmkd->bmd", sol.coeffs, pg[:, :, 1:]), p)
    mean_psi = weights[:, :, batch.cells].mean(-1)  # (B, K + 1, m): int_t psi_i = area * mean of nodal values
    fdot = torch.einsum("bmd,bmjd->bmj", flux, pg)  # F . grad psi_j on every triangle
    half = torch.einsum("bm,bim,bmj->bij", batch.areas, mean_psi, fdot)
    return half - half.transpose(1, 2)


class Regression(nn.Module):
    """Baseline: a transformer over mesh nodes predicting u directly (zero on Dirichlet nodes)."""

    def __init__(self, width: int, heads: int, layers: int):
        super().__init__()
        self.encoder = Encoder(6, width, heads, layers, 0)
        self.head = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, 1))

    def forward(self, batch: MeshBatch) -> torch.Tensor:
        h, _ = self.encoder(batch.inputs)
        return self.head(h)[..., 0] * (1.0 - batch.dirichlet)


def relative_l2(u: torch.Tensor, ref: torch.Tensor, mass: torch.Tensor) -> torch.Tensor:
    """Per mesh ||u - ref||_M / ||ref||_M, (B,)."""
    e = u - ref
    return torch.sqrt(torch.einsum("bn,bnm,bm->b", e, mass, e) / torch.einsum("bn,bnm,bm->b", ref, mass, ref))
