"""Poisson-EAT's P-VAE step at paper scale for benchmarks/gpu.py: MNIST-sized inputs, the method's sampler.

The model and loss of repro.papers.poisson_eat.vae.train_one (relaxed Poisson latents, SSE + Poisson KL), at
the section's latent and hidden sizes, with the first method of the section's list at its smallest tau.
"""

from __future__ import annotations

BATCH_SIZE = 256
PIXELS = 784


def build(section: dict, device):
    """(model, batch(size), loss) of one P-VAE training step."""
    import torch

    from repro.papers.poisson_eat.relaxations import relaxed_sample
    from repro.papers.poisson_eat.vae import PoissonVAE

    cfg = section["vae"]
    method, tau = section["methods"][0], min(cfg["taus"])
    model = PoissonVAE(PIXELS, cfg["n_latent"], cfg["hidden"]).to(device)

    def batch(size: int):
        return torch.rand(size, PIXELS, device=device)

    def loss(net, x):
        post, prior = net.rates(x)
        return net.negative_elbo(x, relaxed_sample(post, tau, method), post, prior).mean()

    return model, batch, loss
