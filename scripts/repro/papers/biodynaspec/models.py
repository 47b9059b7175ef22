"""Networks: a residue transformer with IRFC attention bias, the slot-autoregressive diffusion
generator (BioDynaSpec over frequency bands; the time-domain baseline over time steps), and an
MDGen-style flow-matching model over whole windows.

Tensors: anchor ``[B, L, 3]`` (Angstrom), residue types ``[B, L]`` (0..20), slots
``[B, S, L, F]`` normalised per slot (F = 6 spectral features or 3 coordinates).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

N_RESIDUE_TYPES = 21
COORD_SCALE = 10.0


class IRFCBias(nn.Module):
    """Inter-Residue Frequency Coupling: per head, a learnable mixture of Gaussians of C-alpha distance.

    b[h, i, j] = sum_m w[h, m] * exp(-(d_ij - mu[m])^2 / (2 sigma[m]^2)), mu initialised on 0-20 Å.
    Centres and widths are shared by the heads (each head mixes them with its own weights).
    For speed the bias is tabulated on a 0.1 Å distance grid and looked up (error below
    0.05 Å in distance), so the Gaussians cost O(grid) instead of O(B L^2 M).
    """

    def __init__(
        self, heads: int, kernels: int = 16, max_distance: float = 20.0, grid_step: float = 0.1, grid_max: float = 200.0
    ):
        super().__init__()
        self.mu = nn.Parameter(torch.linspace(0.0, max_distance, kernels))
        self.log_sigma = nn.Parameter(torch.full((kernels,), math.log(max_distance / kernels)))
        self.weight = nn.Parameter(0.1 * torch.randn(heads, kernels))
        self.grid_step = grid_step
        self.register_buffer("grid", torch.arange(0.0, grid_max + grid_step, grid_step), persistent=False)

    def kernel(self, dist: torch.Tensor) -> torch.Tensor:
        """Exact bias per head for distances ``[...]`` -> ``[H, ...]``."""
        gauss = torch.exp(-((dist[..., None] - self.mu) ** 2) / (2 * torch.exp(2 * self.log_sigma)))
        return torch.einsum("...m,hm->h...", gauss, self.weight)

    def forward(self, dist: torch.Tensor) -> torch.Tensor:
        table = self.kernel(self.grid)
        index = torch.round(dist / self.grid_step).long().clamp(max=len(self.grid) - 1)
        return table[:, index].permute(1, 0, 2, 3)


class Block(nn.Module):
    """Pre-norm transformer block whose attention logits take an additive bias ``[B, H, L, L]``."""

    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv, self.out = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        x = x + self.out(F.scaled_dot_product_attention(q, k, v, attn_mask=bias).transpose(1, 2).reshape(b, n, d))
        return x + self.mlp(self.norm2(x))


class ResidueTransformer(nn.Module):
    """Residue tokens (input features + residue type + anchor geometry) through biased attention."""

    def __init__(self, in_features: int, d_model: int, layers: int, heads: int, irfc: bool, kernels: int):
        super().__init__()
        self.inp = nn.Linear(in_features + 3, d_model)
        self.types = nn.Embedding(N_RESIDUE_TYPES, d_model)
        self.blocks = nn.ModuleList([Block(d_model, heads) for _ in range(layers)])
        self.irfc = IRFCBias(heads, kernels) if irfc else None
        self.norm = nn.LayerNorm(d_model)

    def forward(self, features: torch.Tensor, anchor: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        centred = anchor - anchor.mean(1, keepdim=True)
        x = self.inp(torch.cat([features, centred / COORD_SCALE], -1)) + self.types(types)
        bias = self.irfc(torch.cdist(anchor, anchor)) if self.irfc is not None else None
        for block in self.blocks:
            x = block(x, bias)
        return self.norm(x)


def time_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding of diffusion/flow time ``t`` in [0, 1] (``[B]`` -> ``[B, dim]``)."""
    freqs = torch.exp(torch.linspace(0.0, math.log(1000.0), dim // 2, device=t.device))
    angles = t[:, None] * freqs[None] * math.pi
    return torch.cat([angles.sin(), angles.cos()], -1)


def cosine_alpha_bar(steps: int) -> torch.Tensor:
    """Cumulative signal fraction of the cosine schedule, ``[steps + 1]`` from 1 down to ~0."""
    s = torch.linspace(0, 1, steps + 1, dtype=torch.float64)
    f = torch.cos((s + 0.008) / 1.008 * math.pi / 2) ** 2
    return (f / f[0]).clamp(min=1e-5).float()


class SlotDiffusion(nn.Module):
    """Autoregression over slots (bands low-to-high, or time steps) with a per-slot DDPM head.

    The residue transformer sees the anchor and the slots already generated (later slots
    masked) and the index of the slot to generate; a small denoising head (one attention
    block over residues with the same IRFC bias, so residues are denoised jointly) predicts
    the noise of that slot's coefficients (epsilon prediction, cosine schedule; the sampler uses the DDPM posterior of
    the clipped clean estimate, which stays stable at the schedule's last, nearly pure-noise step).
    """

    def __init__(
        self,
        n_slots: int,
        features: int,
        d_model: int = 64,
        layers: int = 2,
        heads: int = 4,
        irfc: bool = True,
        kernels: int = 16,
        diffusion_steps: int = 50,
    ):
        super().__init__()
        self.n_slots, self.features, self.steps = n_slots, features, diffusion_steps
        self.clip = 6.0  # predicted clean slots are clipped to +-6 per-slot RMS units while sampling
        self.encoder = ResidueTransformer(n_slots * features, d_model, layers, heads, irfc, kernels)
        self.slot_embed = nn.Embedding(n_slots, d_model)
        self.head_in = nn.Linear(features + 2 * d_model, d_model)
        self.head_block = Block(d_model, heads)
        self.head_out = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, features))
        self.register_buffer("alpha_bar", cosine_alpha_bar(diffusion_steps))

    def condition(self, anchor, types, slots, index):
        visible = (torch.arange(self.n_slots, device=slots.device)[None] < index[:, None]).float()
        prev = (slots * visible[:, :, None, None]).permute(0, 2, 1, 3).flatten(2)
        return self.encoder(prev, anchor, types) + self.slot_embed(index)[:, None]

    def denoise(self, x_t, t, cond, bias):
        """Noise estimate for all residues jointly: one biased attention block over residues."""
        temb = time_embedding(t.float() / self.steps, cond.shape[-1])[:, None].expand(-1, x_t.shape[1], -1)
        return self.head_out(self.head_block(self.head_in(torch.cat([x_t, cond, temb], -1)), bias))

    def _bias(self, anchor):
        irfc = self.encoder.irfc
        return irfc(torch.cdist(anchor, anchor)) if irfc is not None else None

    def loss(self, anchor, types, slots) -> torch.Tensor:
        b, dev = slots.shape[0], slots.device
        index = torch.randint(0, self.n_slots, (b,)).to(dev)  # drawn on the CPU: the same stream everywhere
        cond = self.condition(anchor, types, slots, index)
        x0 = slots[torch.arange(b, device=dev), index]
        t = torch.randint(1, self.steps + 1, (b,)).to(dev)
        ab = self.alpha_bar[t][:, None, None]
        noise = torch.randn_like(x0)
        return F.mse_loss(self.denoise(ab.sqrt() * x0 + (1 - ab).sqrt() * noise, t, cond, self._bias(anchor)), noise)

    @torch.no_grad()
    def sample(self, anchor, types, generator: torch.Generator) -> torch.Tensor:
        b, n, dev = *anchor.shape[:2], anchor.device
        slots = torch.zeros(b, self.n_slots, n, self.features, device=dev)
        bias = self._bias(anchor)
        for j in range(self.n_slots):
            cond = self.condition(anchor, types, slots, torch.full((b,), j, device=dev))
            x = torch.randn(b, n, self.features, generator=generator).to(dev)
            for t in range(self.steps, 0, -1):
                ab, ab_prev = self.alpha_bar[t], self.alpha_bar[t - 1]
                beta = 1 - ab / ab_prev
                eps = self.denoise(x, torch.full((b,), t, device=dev), cond, bias)
                x0 = ((x - (1 - ab).sqrt() * eps) / ab.sqrt()).clamp(-self.clip, self.clip)
                x = (ab_prev.sqrt() * beta * x0 + (1 - beta).sqrt() * (1 - ab_prev) * x) / (1 - ab)
                if t > 1:
                    x = x + (beta * (1 - ab_prev) / (1 - ab)).sqrt() * torch.randn(x.shape, generator=generator).to(dev)
            slots[:, j] = x
        return slots


class WindowFlow(nn.Module):
    """MDGen-style baseline: flow matching (linear path, velocity prediction) over a whole window.

    Residue tokens carry all ``W`` frames' normalised displacements at once; Euler sampler.
    """

    def __init__(
        self, n_slots: int, features: int, d_model: int = 64, layers: int = 2, heads: int = 4, flow_steps: int = 20
    ):
        super().__init__()
        self.n_slots, self.features, self.steps = n_slots, features, flow_steps
        self.encoder = ResidueTransformer(n_slots * features + d_model, d_model, layers, heads, False, 0)
        self.out = nn.Linear(d_model, n_slots * features)
        self.d_model = d_model

    def velocity(self, x, t, anchor, types):
        temb = time_embedding(t, self.d_model)[:, None].expand(-1, x.shape[1], -1)
        return self.out(self.encoder(torch.cat([x, temb], -1), anchor, types))

    def loss(self, anchor, types, slots) -> torch.Tensor:
        x1 = slots.permute(0, 2, 1, 3).flatten(2)
        x0 = torch.randn_like(x1)
        t = torch.rand(x1.shape[0]).to(x1.device)
        xt = (1 - t[:, None, None]) * x0 + t[:, None, None] * x1
        return F.mse_loss(self.velocity(xt, t, anchor, types), x1 - x0)

    @torch.no_grad()
    def sample(self, anchor, types, generator: torch.Generator) -> torch.Tensor:
        b, n = anchor.shape[:2]
        x = torch.randn(b, n, self.n_slots * self.features, generator=generator).to(anchor.device)
        for i in range(self.steps):
            t = torch.full((b,), i / self.steps, device=anchor.device)
            x = x + self.velocity(x, t, anchor, types) / self.steps
        return x.view(b, n, self.n_slots, self.features).permute(0, 2, 1, 3)
