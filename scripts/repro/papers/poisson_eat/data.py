"""Stage: write the paper's inputs in the canonical format under results/poisson-eat/data/.

- digits.npz: scikit-learn's shipped 8x8 digits scaled to [0, 1], images (sample, h, w) float32, labels,
  and a seeded train/test split;
- spikes.npz: a simulated partially observed GLM, spikes (time_bin, neuron) int16 with the ground-truth
  weights, biases and coupling kernel;
- manifest.json: what was written, from which seed and settings, with sha256 of each file.
"""

from __future__ import annotations

import numpy as np
import sklearn
from sklearn.datasets import load_digits

from repro.papers.poisson_eat.spikes import simulate_glm
from repro.workflow.io import atomic_path, sha256, write_json


def digits_arrays(seed: int, n_test: int) -> dict[str, np.ndarray]:
    """Digits images in [0, 1] with a seeded split of ``n_test`` test images."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)
    order = np.random.default_rng(seed).permutation(len(images))
    return {
        "images": images,
        "labels": digits.target.astype(np.int16),
        "test_index": np.sort(order[:n_test]),
        "train_index": np.sort(order[n_test:]),
    }


def main(job) -> None:
    settings = job.params.settings
    seed = int(settings["data_seed"])
    glm = settings["poglm"]
    with atomic_path(job.output.digits) as tmp:
        np.savez(tmp, **digits_arrays(seed, int(settings["vae"]["n_test"])))
    rng = np.random.default_rng(seed + 1)
    sim = simulate_glm(
        rng, glm["n_observed"], glm["n_hidden"], glm["n_bins"], glm["decay"], glm["kernel_length"], glm["max_rate"]
    )
    with atomic_path(job.output.spikes) as tmp:
        np.savez(tmp, **sim)
    write_json(
        job.output.manifest,
        {
            "source": "embedded",
            "seed": seed,
            "files": {
                "digits.npz": {
                    "sha256": sha256(job.output.digits),
                    "origin": "sklearn.datasets.load_digits",
                    "sklearn": sklearn.__version__,
                    "licence": "CC BY 4.0 (UCI optical digits)",
                },
                "spikes.npz": {"sha256": sha256(job.output.spikes), "origin": "simulate_glm", "settings": glm},
            },
        },
    )
