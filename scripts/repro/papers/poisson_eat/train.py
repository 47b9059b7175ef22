"""Stage: train the P-VAE (temperature sweep) and the POGLM with one relaxation method."""

from __future__ import annotations

import logging

from repro.device import pick_device
from repro.io import write_json
from repro.papers.poisson_eat import poglm, spikes, vae

LOG = logging.getLogger(__name__)


def main(job) -> None:
    settings = job.params.settings
    method = job.wildcards.method
    device = pick_device(job.params.device)
    LOG.info("device %s", device)
    train, test = vae.load_digits_npz(job.input.digits)
    vae_runs = []
    for tau in settings["vae"]["taus"]:
        for seed in settings["vae"]["seeds"]:
            vae_runs.append(vae.train_one(train, test, method, tau, int(seed), settings["vae"], device))
            LOG.info("P-VAE %s tau=%g seed=%d: test ELBO %.3f", method, tau, seed, vae_runs[-1]["test_elbo"])
    sim = spikes.load_spikes(job.input.spikes)
    cfg = settings["poglm"]
    poglm_runs = []
    for seed in cfg["seeds"]:
        poglm_runs.append(poglm.fit(sim, method, cfg["tau"], int(seed), cfg, device))
        LOG.info("POGLM %s seed=%d: corr %.3f", method, seed, poglm_runs[-1]["corr_observed"])
    write_json(job.output[0], {"method": method, "vae": vae_runs, "poglm": poglm_runs})
