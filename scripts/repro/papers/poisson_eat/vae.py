"""Poisson-latent VAE (P-VAE) on the digits, trained with one relaxation at several temperatures.

Posterior rates are r * delta(x) with learnable prior rates r; the loss is the summed squared error over
2 sigma^2 (a Gaussian decoder of variance ``decoder_variance`` = sigma^2, constants dropped, identical for
every method) plus the Poisson KL r (1 - delta + delta log delta). Training uses the relaxed sample; the
reported test ELBO feeds exact Poisson draws to the decoder, so every method and temperature is scored on the
same discrete model. The trivial model a P-VAE must beat (its learning check) decodes every image as the
training mean with the posterior equal to the prior: its negative ELBO is the mean image's SSE / 2 sigma^2.
"""

from __future__ import annotations

import os

import numpy as np
import torch
from torch import nn

from repro.learning import training
from repro.learning.training import epoch_rng, seed_everything
from repro.papers.poisson_eat.metrics import poisson_kl
from repro.papers.poisson_eat.relaxations import relaxed_sample
from repro.workflow.io import InputError

LOG_RATE_RANGE = (-6.0, 3.0)


class PoissonVAE(nn.Module):
    """MLP encoder to log delta, learnable log prior rates, MLP decoder."""

    def __init__(self, n_pixels: int, n_latent: int, hidden: int, decoder_variance: float = 0.5):
        super().__init__()
        self.recon_weight = 1.0 / (2.0 * decoder_variance)
        self.encoder = nn.Sequential(nn.Linear(n_pixels, hidden), nn.ReLU(), nn.Linear(hidden, n_latent))
        self.log_prior = nn.Parameter(torch.zeros(n_latent))
        self.decoder = nn.Sequential(nn.Linear(n_latent, hidden), nn.ReLU(), nn.Linear(hidden, n_pixels))

    def rates(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(posterior, prior) rates, log-rates clamped so relaxed samplers stay cheap and finite."""
        log_prior = self.log_prior.clamp(*LOG_RATE_RANGE)
        log_post = (log_prior + self.encoder(x)).clamp(*LOG_RATE_RANGE)
        return log_post.exp(), log_prior.exp().expand_as(log_post)

    def negative_elbo(self, x: torch.Tensor, z: torch.Tensor, post: torch.Tensor, prior: torch.Tensor):
        """Per-example SSE / 2 sigma^2 + KL."""
        recon = self.recon_weight * ((self.decoder(z) - x) ** 2).sum(-1)
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
def exact_test_elbo(model: PoissonVAE, x: torch.Tensor, draws: int) -> np.ndarray:
    """ELBO of every image with exact Poisson latents (mean over ``draws`` draws)."""
    post, prior = model.rates(x)
    return np.mean([-model.negative_elbo(x, torch.poisson(post), post, prior).cpu().numpy() for _ in range(draws)], 0)


def trivial_test_elbo(train: torch.Tensor, test: torch.Tensor, decoder_variance: float) -> np.ndarray:
    """ELBO of every test image under the trivial model: the training mean decoded, KL 0 (posterior = prior)."""
    sse = ((test - train.mean(0)) ** 2).sum(-1)
    return (-sse / (2.0 * decoder_variance)).cpu().numpy()


def train_one(
    train: torch.Tensor,
    test: torch.Tensor,
    method: str,
    tau: float,
    seed: int,
    cfg: dict,
    device: str = "cpu",
    checkpoint: str | os.PathLike | None = None,
    fingerprint: str = "",
) -> dict:
    """Train one P-VAE on ``device`` with the shared loop; return its per-epoch relaxed training ELBO and the
    exact test ELBO.

    Batch order comes from ``epoch_rng(seed, epoch)`` and the relaxed samples from torch's generator, which the
    loop seeds from (seed, epoch) at each epoch, so a run resumed from ``checkpoint`` (saved every epoch) ends
    with the same weights as an uninterrupted one. Every method trains for the same number of epochs; the weights
    kept are those of the epoch with the lowest relaxed training loss (the shared loop's rule without validation).
    """
    seed_everything(seed)
    train, test = train.to(device), test.to(device)
    model = PoissonVAE(train.shape[1], cfg["n_latent"], cfg["hidden"], cfg["decoder_variance"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    def batches(epoch: int):
        order = torch.from_numpy(epoch_rng(seed, epoch).permutation(len(train))).to(device)
        return (train[idx] for idx in order.split(cfg["batch_size"]))

    def loss_fn(net: PoissonVAE, x: torch.Tensor) -> torch.Tensor:
        post, prior = net.rates(x)
        return net.negative_elbo(x, relaxed_sample(post, tau, method), post, prior).mean()

    result = training.train(
        model,
        loss_fn,
        batches,
        epochs=cfg["epochs"],
        optimizer=opt,
        checkpoint=checkpoint,
        checkpoint_every=1,
        fingerprint=fingerprint,
        desc=f"P-VAE {method} tau={tau:g} seed={seed}",
        seed=seed,
    )
    per_image = exact_test_elbo(model, test, cfg["eval_draws"])
    return {
        "tau": tau,
        "seed": seed,
        "train_elbo_curve": [-r["loss"] for r in result.history],
        "test_elbo": float(np.mean(per_image)),
        "test_elbo_per_image": per_image.tolist(),
        "trivial_elbo_per_image": trivial_test_elbo(train, test, cfg["decoder_variance"]).tolist(),
    }
