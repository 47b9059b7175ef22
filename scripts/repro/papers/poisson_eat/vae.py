"""Poisson-latent VAE (P-VAE) on the digits, trained with one relaxation at several temperatures.

Posterior rates are r * delta(x) with learnable prior rates r; the loss is the summed squared error
(a Gaussian decoder of variance 1/2, constants dropped, identical for every method) plus the Poisson KL
r (1 - delta + delta log delta). Training uses the relaxed sample; the reported test ELBO feeds exact
Poisson draws to the decoder, so every method and temperature is scored on the same discrete model.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from repro.io import InputError
from repro.papers.poisson_eat.metrics import poisson_kl
from repro.papers.poisson_eat.relaxations import relaxed_sample
from repro.training import seed_everything

LOG_RATE_RANGE = (-6.0, 3.0)


class PoissonVAE(nn.Module):
    """MLP encoder to log delta, learnable log prior rates, MLP decoder."""

    def __init__(self, n_pixels: int, n_latent: int, hidden: int):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_pixels, hidden), nn.ReLU(), nn.Linear(hidden, n_latent))
        self.log_prior = nn.Parameter(torch.zeros(n_latent))
        self.decoder = nn.Sequential(nn.Linear(n_latent, hidden), nn.ReLU(), nn.Linear(hidden, n_pixels))

    def rates(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(posterior, prior) rates, log-rates clamped so relaxed samplers stay cheap and finite."""
        log_prior = self.log_prior.clamp(*LOG_RATE_RANGE)
        log_post = (log_prior + self.encoder(x)).clamp(*LOG_RATE_RANGE)
        return log_post.exp(), log_prior.exp().expand_as(log_post)

    def negative_elbo(self, x: torch.Tensor, z: torch.Tensor, post: torch.Tensor, prior: torch.Tensor):
        """Per-example SSE + KL."""
        recon = ((self.decoder(z) - x) ** 2).sum(-1)
        return recon + poisson_kl(post, prior, xp=torch).sum(-1)


def load_digits_npz(path: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, test) flattened images; names the file on a missing array."""
    with np.load(path) as data:
        for key in ("images", "train_index", "test_index"):
            if key not in data:
                raise InputError(path, f"missing array {key!r}")
        images = data["images"].reshape(len(data["images"]), -1)
        return torch.from_numpy(images[data["train_index"]]), torch.from_numpy(images[data["test_index"]])


@torch.no_grad()
def exact_test_elbo(model: PoissonVAE, x: torch.Tensor, draws: int) -> float:
    """Mean ELBO per image with exact Poisson latents."""
    post, prior = model.rates(x)
    return float(
        np.mean([-model.negative_elbo(x, torch.poisson(post), post, prior).mean().item() for _ in range(draws)])
    )


def train_one(
    train: torch.Tensor, test: torch.Tensor, method: str, tau: float, seed: int, cfg: dict, device: str = "cpu"
) -> dict:
    """Train one P-VAE on ``device``; return its per-epoch relaxed training loss and the exact test ELBO."""
    seed_everything(seed)
    train, test = train.to(device), test.to(device)
    model = PoissonVAE(train.shape[1], cfg["n_latent"], cfg["hidden"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    curve = []
    for _ in range(cfg["epochs"]):
        perm = torch.randperm(len(train), device=device)
        total = 0.0
        for idx in perm.split(cfg["batch_size"]):
            x = train[idx]
            post, prior = model.rates(x)
            loss = model.negative_elbo(x, relaxed_sample(post, tau, method), post, prior).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        curve.append(-total / len(train))
    return {
        "tau": tau,
        "seed": seed,
        "train_elbo_curve": curve,
        "test_elbo": exact_test_elbo(model, test, cfg["eval_draws"]),
    }
