"""Stage: train the conservative MLIP on EMT energies and forces (monolithic autograd, float64).

Forces are -dE/dr with create_graph, so every step runs the double backward the pipeline stages split.
Outputs ``model.pt`` (weights and the settings that rebuild the model) and ``train.json`` (loss history,
test energy/force MAE); checkpoints under results/januspipe/checkpoints/ make a killed run resume exactly.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.learning.training import epoch_rng, fingerprint_of, train
from repro.papers.januspipe import dataset
from repro.papers.januspipe.model import MLIP, monolithic
from repro.workflow.io import atomic_path, write_json

CHECKPOINT = "results/januspipe/checkpoints/train.pt"


def build(settings: dict, split: list[int] | None = None) -> MLIP:
    m = settings["model"]
    units = m["layers"] + 1
    return MLIP(m["n_radial"], m["cutoff"], m["width"], m["layers"], split or [units])


def mae(model: MLIP, data: dict, idx: np.ndarray, weights: dict) -> dict:
    """Energy and force MAE over the structures ``idx``, and per structure the force MAE of the model and of the
    trivial predictor (zero forces: the mean force of a relaxed-lattice training set), for the learning check."""
    _, energy, forces = monolithic(model, dataset.batch(data, idx), weights)
    n = data["positions"].shape[1]
    force_error = np.abs(forces.detach().numpy() - data["forces"][idx])
    return {
        "energy_mae_ev_per_atom": float(np.mean(np.abs(energy.detach().numpy() - data["energy"][idx])) / n),
        "force_mae_ev_per_a": float(np.mean(force_error)),
        "per_structure_force_mae": force_error.mean(axis=(1, 2)).tolist(),
        "per_structure_zero_force_mae": np.abs(data["forces"][idx]).mean(axis=(1, 2)).tolist(),
    }


def main(job, checkpoint: str = CHECKPOINT) -> None:
    settings, seed = job.params.settings, int(job.params.seed)
    data = dataset.load(job.input.configs)
    dataset.check_cutoff(job.input.configs, data["cells"], settings["model"]["cutoff"])
    cfg = settings["train"]
    train_idx, test_idx = np.flatnonzero(data["split"] == 0), np.flatnonzero(data["split"] == 1)
    torch.manual_seed(seed)
    model = build(settings)
    model.species_energy.copy_(dataset.species_energies(data, train_idx))
    weights = cfg["weights"]

    def batches(epoch: int):
        order = epoch_rng(seed, epoch).permutation(train_idx)
        for start in range(0, len(order), cfg["batch_size"]):
            yield dataset.batch(data, order[start : start + cfg["batch_size"]])

    result = train(
        model,
        lambda mdl, b: monolithic(mdl, b, weights)[0],
        batches,
        epochs=cfg["epochs"],
        optimizer=torch.optim.Adam(model.parameters(), lr=cfg["lr"]),
        checkpoint=checkpoint,
        checkpoint_every=cfg["checkpoint_every"],
        fingerprint=fingerprint_of(settings, [__file__]),
        desc="januspipe train",
        seed=seed,
    )
    with atomic_path(job.output.model) as tmp:
        torch.save({"state": model.state_dict(), "model": settings["model"]}, tmp)
    write_json(
        job.output.summary,
        {
            "history": result.history,
            "test": mae(model, data, test_idx, weights),
            "train": mae(model, data, train_idx, weights),
        },
    )
