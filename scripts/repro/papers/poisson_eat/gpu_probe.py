"""Poisson-EAT's P-VAE step at paper scale for benchmarks/gpu.py: the digits' 64 pixels, the method's sampler.

The model and loss of repro.papers.poisson_eat.vae.train_one (relaxed Poisson latents, SSE + Poisson KL), at
the section's latent and hidden sizes, with the first method of the section's list at its smallest tau.
"""

from __future__ import annotations

BATCH_SIZE = 256
STAGE = "train"  # workflow/rules/poisson-eat.smk: one job per {method}
# Images of scikit-learn's bundled digits (load_digits: 1,797 8x8 images, docs/papers/poisson-eat.md), the
# P-VAE's data at every scale: the train split is these less ``vae.n_test``, and an image has 64 pixels.
DIGITS_IMAGES, DIGITS_PIXELS = 1797, 64


def build(section: dict, device):
    """(model, batch(size), loss) of one P-VAE training step."""
    import torch

    from repro.papers.poisson_eat.relaxations import relaxed_sample
    from repro.papers.poisson_eat.vae import PoissonVAE

    cfg = section["vae"]
    method, tau = section["methods"][0], min(cfg["taus"])
    model = PoissonVAE(DIGITS_PIXELS, cfg["n_latent"], cfg["hidden"]).to(device)

    def batch(size: int):
        return torch.rand(size, DIGITS_PIXELS, device=device)

    def loss(net, x):
        post, prior = net.rates(x)
        return net.negative_elbo(x, relaxed_sample(post, tau, method), post, prior).mean()

    return model, batch, loss


def vae_step_macs(pixels: int, latent: int, hidden: int) -> int:
    """Multiply-accumulates of one image's forward + backward through the P-VAE (pixels -> hidden -> latent,
    latent -> hidden -> pixels): each product, its weight gradient and its input gradient, except the
    encoder's first layer's (the image needs no gradient; the relaxed latent does)."""
    layers = [pixels * hidden, hidden * latent, latent * hidden, hidden * pixels]
    return 3 * sum(layers) - layers[0]


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of one train job (one method), in samples of the probe's step (the P-VAE's).

    P-VAE: for each of ``vae.taus`` x ``vae.seeds``, ``vae.epochs`` epochs over the DIGITS_IMAGES -
    ``vae.n_test`` training images (every image once an epoch, the last batch partial), one probe sample each.
    POGLM: ``poglm.seeds`` x ``poglm.steps`` full-batch steps over ``poglm.n_bins`` bins of n = n_observed +
    n_hidden neurons, about n_bins (2 n kernel_length + 3 n^2) multiply-accumulates each (the causal filter
    forward and input gradient, the coupling product forward and both gradients; float64, about 2 % of the job
    at full scale), in probe samples of :func:`vae_step_macs`. Left out: the exact-draw test ELBOs (forward
    only, ``vae.n_test`` x ``vae.eval_draws`` images a run, and ``poglm.eval_draws`` passes), the relaxed
    samplers and the other elementwise work. Batch ``vae.batch_size``."""
    vae, glm = section["vae"], section["poglm"]
    latent, hidden = int(vae["n_latent"]), int(vae["hidden"])
    images = len(vae["taus"]) * len(vae["seeds"]) * int(vae["epochs"]) * (DIGITS_IMAGES - int(vae["n_test"]))
    neurons = int(glm["n_observed"]) + int(glm["n_hidden"])
    poglm_step = int(glm["n_bins"]) * (2 * neurons * int(glm["kernel_length"]) + 3 * neurons**2)
    macs = images * vae_step_macs(DIGITS_PIXELS, latent, hidden) + len(glm["seeds"]) * int(glm["steps"]) * poglm_step
    return round(macs / vae_step_macs(DIGITS_PIXELS, latent, hidden)), int(vae["batch_size"])
