"""Stacks (one member per seed) of the two generative models trained on (perturbed) manifold data:
an MLP DDPM with epsilon prediction and a RealNVP flow with affine couplings."""

from __future__ import annotations

import math

import torch
from torch import nn

from repro.learning.ensemble import EnsembleMLP


def _time_features(t: torch.Tensor) -> torch.Tensor:
    return torch.stack([t, torch.sin(math.pi * t), torch.cos(math.pi * t), torch.sin(2 * math.pi * t)], -1)


class DDPM(nn.Module):
    """Discrete-time DDPM (linear beta schedule) with an MLP noise predictor per member."""

    def __init__(self, seeds: list[int], d: int, hidden: int, layers: int, steps: int, beta: tuple[float, float]):
        super().__init__()
        self.d, self.steps = d, steps
        self.net = EnsembleMLP(seeds, [d + 4] + [hidden] * layers + [d])
        betas = torch.linspace(beta[0], beta[1], steps, dtype=torch.float64)
        self.register_buffer("betas", betas.float(), persistent=False)
        self.register_buffer("alpha_bar", torch.cumprod(1 - betas, 0).float(), persistent=False)

    def eps(self, x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([x, _time_features(k.float() / self.steps)], -1))

    def loss(self, x0: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Per-member mean squared noise-prediction error, (M,)."""
        m, b, _ = x0.shape
        k = torch.randint(0, self.steps, (m, b), generator=generator, device=x0.device)
        noise = torch.randn(x0.shape, generator=generator, device=x0.device)
        ab = self.alpha_bar[k][..., None]
        xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
        return ((self.eps(xt, k) - noise) ** 2).mean((-1, -2))

    @torch.no_grad()
    def normal_gain(
        self, x0: torch.Tensor, normals: torch.Tensor, generator: torch.Generator, k: int = 0
    ) -> torch.Tensor:
        """Per member, the median over points of n . d eps_hat / dx . n at noise level ``k`` (central difference
        along the unit normal ``normals`` at x_k = sqrt(ab) x0 + sqrt(1 - ab) eps), (M,).

        The optimal noise predictor for data on a manifold has gain 1 / sqrt(1 - ab_k) across it (the score
        blows up as k -> 0); for data spread by sigma across it, about sqrt(1 - ab_k) / sigma^2."""
        m = self.net.layers[0].weight.shape[0]
        x0, normals = x0.expand(m, -1, -1), normals.expand(m, -1, -1)
        ab = self.alpha_bar[k]
        sd = (1 - ab).sqrt()
        xt = ab.sqrt() * x0 + sd * torch.randn(x0.shape, generator=generator, device=x0.device)
        steps = torch.full(x0.shape[:2], k, dtype=torch.long, device=x0.device)
        h = 0.1 * sd
        slope = (self.eps(xt + h * normals, steps) - self.eps(xt - h * normals, steps)) / (2 * h)
        return torch.median((slope * normals).sum(-1), dim=1).values

    @torch.no_grad()
    def sample(self, n: int, generator: torch.Generator) -> torch.Tensor:
        weight = self.net.layers[0].weight
        m, dev = weight.shape[0], weight.device
        x = torch.randn(m, n, self.d, generator=generator, device=dev)
        for step in reversed(range(self.steps)):
            k = torch.full((m, n), step, dtype=torch.long, device=dev)
            beta, ab = self.betas[step], self.alpha_bar[step]
            mean = (x - beta / (1 - ab).sqrt() * self.eps(x, k)) / (1 - beta).sqrt()
            x = mean + (beta.sqrt() * torch.randn(x.shape, generator=generator, device=dev) if step > 0 else 0.0)
        return x


class RealNVP(nn.Module):
    """Affine coupling flow: alternating binary masks, log-scale = learnable scale * tanh(raw)."""

    def __init__(self, seeds: list[int], d: int, hidden: int, layers: int, couplings: int):
        super().__init__()
        self.d = d
        masks = [(torch.arange(d) + k) % 2 for k in range(couplings)]
        self.register_buffer("masks", torch.stack(masks).float(), persistent=False)
        self.nets = nn.ModuleList(
            [
                EnsembleMLP([100 * s + k for s in seeds], [d] + [hidden] * layers + [2 * d], 0.01)
                for k in range(couplings)
            ]
        )
        self.log_scale = nn.Parameter(torch.zeros(len(seeds), couplings, 1, d))

    def _st(self, k: int, x_masked: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.nets[k](x_masked)
        free = 1 - self.masks[k]
        s = self.log_scale[:, k].exp() * torch.tanh(out[..., : self.d]) * free
        return s, out[..., self.d :] * free

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (M, B, d) -> latent z and log|det dz/dx| (M, B)."""
        logdet = torch.zeros(x.shape[:2], device=x.device)
        for k in range(len(self.nets)):
            s, t = self._st(k, x * self.masks[k])
            x = x * torch.exp(s) + t
            logdet = logdet + s.sum(-1)
        return x, logdet

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        z, logdet = self(x)
        return -0.5 * (z**2).sum(-1) - 0.5 * self.d * math.log(2 * math.pi) + logdet

    def loss(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Per-member negative log-likelihood in nats per point, (M,)."""
        return -self.log_prob(x).mean(-1)

    @torch.no_grad()
    def sample(self, n: int, generator: torch.Generator) -> torch.Tensor:
        m = self.log_scale.shape[0]
        x = torch.randn(m, n, self.d, generator=generator, device=self.log_scale.device)
        for k in reversed(range(len(self.nets))):
            s, t = self._st(k, x * self.masks[k])
            x = (x - t) * torch.exp(-s)
        return x


def build(kind: str, seeds: list[int], d: int, cfg: dict) -> nn.Module:
    """The stack of model ``kind`` (ddpm or flow) with one member per seed."""
    if kind == "ddpm":
        return DDPM(seeds, d, int(cfg["hidden"]), int(cfg["layers"]), int(cfg["steps"]), tuple(cfg["beta"]))
    if kind == "flow":
        return RealNVP(seeds, d, int(cfg["hidden"]), int(cfg["layers"]), int(cfg["couplings"]))
    raise ValueError(f"unknown model {kind!r}: expected ddpm or flow")
