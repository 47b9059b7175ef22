"""Stage: train the P-VAE (temperature sweep) and the POGLM with one relaxation method.

Each finished (model, tau, seed) run is saved under the rule's checkpoint folder, keyed by a hash of the
settings, the input data and this package's code, so a killed job resumes after its last finished run and
a changed config or code never reuses a stale result. A P-VAE run also checkpoints every epoch (the shared
loop's checkpoint, same key), so a kill inside one resumes at its last epoch; a POGLM fit is short and restarts
from its seed.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repro.papers.poisson_eat import poglm, spikes, vae
from repro.workflow.device import pick_device
from repro.workflow.io import read_json, write_json

LOG = logging.getLogger(__name__)
PACKAGE = Path(__file__).resolve().parent


def run_key(settings: dict, inputs: list[str]) -> str:
    """Hash of the settings, the input files and the package's code."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode())
    for path in [*inputs, *sorted(PACKAGE.glob("*.py"))]:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def cached(folder: Path, name: str, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Result of ``compute`` stored as ``folder/name.json``; read back instead of recomputed when present."""
    path = folder / f"{name}.json"
    if path.exists():
        LOG.info("resuming: %s already done", path)
        return read_json(path)
    result = compute()
    write_json(path, result)
    (folder / f"{name}.pt").unlink(missing_ok=True)  # the finished run's json replaces its epoch checkpoint
    return read_json(path)


def main(job) -> None:
    settings = job.params.settings
    method = job.wildcards.method
    device = pick_device(job.params.device)
    key = run_key(settings, [job.input.digits, job.input.spikes])
    folder = Path(job.params.checkpoints) / method / key
    LOG.info("device %s, checkpoints %s", device, folder)
    train, test = vae.load_digits_npz(job.input.digits)
    vae_runs = []
    for tau in settings["vae"]["taus"]:
        for seed in settings["vae"]["seeds"]:
            run = cached(
                folder,
                f"vae_tau{tau}_seed{seed}",
                lambda: vae.train_one(
                    train,
                    test,
                    method,
                    tau,
                    int(seed),
                    settings["vae"],
                    device,
                    checkpoint=folder / f"vae_tau{tau}_seed{seed}.pt",
                    fingerprint=key,
                ),
            )
            vae_runs.append(run)
            LOG.info("P-VAE %s tau=%g seed=%d: test ELBO %.3f", method, tau, seed, run["test_elbo"])
    sim = spikes.load_spikes(job.input.spikes)
    cfg = settings["poglm"]
    poglm_runs = []
    for seed in cfg["seeds"]:
        run = cached(folder, f"poglm_seed{seed}", lambda: poglm.fit(sim, method, cfg["tau"], int(seed), cfg, device))
        poglm_runs.append(run)
        LOG.info("POGLM %s seed=%d: corr %.3f", method, seed, run["corr_observed"])
    write_json(job.output.run, {"method": method, "vae": vae_runs, "poglm": poglm_runs})
