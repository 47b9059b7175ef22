"""Stage: train the distinguishers on N reduced samples repeated r times (r epochs over N examples) for every
(N, r) of the grid, and count the attempts until each secret's cruel support comes up (attempts.json).

The cruel split comes from the reduced samples alone (column std), the true support only scores the attempt.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from repro.learning.training import epoch_rng, fingerprint_of, train
from repro.papers.lwe.attack import attempts, cruel_columns, expected_exhaustive_attempts
from repro.papers.lwe.model import BatchedMLP, angular, distinguisher_scores
from repro.workflow.device import pick_device
from repro.workflow.io import InputError, write_json


def load(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path) as data:
            return {k: data[k] for k in ("R_A", "R_b", "secrets", "params")}
    except (OSError, ValueError, KeyError) as err:
        raise InputError(path, f"cannot read the reduced samples ({err})") from err


def fit_grid_point(
    data: dict,
    cruel: np.ndarray,
    n_train: int,
    reps: int,
    cfg: dict,
    seed: int,
    ckpt: Path,
    device: torch.device | None = None,
) -> np.ndarray:
    device = device or torch.device("cpu")
    q = int(data["params"][1])
    x = angular(data["R_A"][:n_train, cruel], q).to(device)
    theta = torch.as_tensor(2 * np.pi * data["R_b"][:, :n_train] / q, dtype=torch.float32)
    y = torch.stack([torch.cos(theta), torch.sin(theta)], dim=-1).to(device)
    generator = torch.Generator().manual_seed(seed)
    model = BatchedMLP(y.shape[0], x.shape[1], cfg["hidden"], generator).to(device)
    batch = cfg["batch_size"]

    def batches(epoch: int):
        order = torch.as_tensor(epoch_rng(seed, epoch).permutation(n_train), device=device)
        return [order[i : i + batch] for i in range(0, n_train, batch)]

    def loss_fn(m: BatchedMLP, idx: torch.Tensor) -> torch.Tensor:
        return torch.mean((m(x[idx]) - y[:, idx]) ** 2)

    train(
        model,
        loss_fn,
        batches,
        epochs=reps,
        optimizer=torch.optim.Adam(model.parameters(), lr=cfg["lr"]),
        checkpoint=ckpt,
        checkpoint_every=1,
        fingerprint=fingerprint_of({"n": n_train, "r": reps, **cfg}, [__file__]),
        desc=f"lwe N={n_train} r={reps}",
        seed=seed,
    )
    ckpt.unlink(missing_ok=True)
    return distinguisher_scores(model, data["R_A"][-cfg["test_samples"] :, cruel], q)


def main(job) -> None:
    settings, seed = job.params.settings, int(job.params.seed)
    cfg = settings["model"]
    data = load(job.input.instances)
    q = int(data["params"][1])
    if max(cfg["sizes"]) + cfg["test_samples"] > data["R_A"].shape[0]:
        raise InputError(job.input.instances, "fewer reduced samples than the largest N plus the test samples")
    cruel = cruel_columns(data["R_A"], q, settings["attack"]["cruel_threshold"])
    supports = [np.flatnonzero(s[cruel]) for s in data["secrets"]]
    torch.set_num_threads(job.threads)
    device = pick_device(job.params.device)
    ckpt_dir = Path(job.output.attempts).parent / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    runs = []
    for n_train in cfg["sizes"]:
        for reps in cfg["repetitions"]:
            ckpt = ckpt_dir / f"N{n_train}_r{reps}.pt"
            scores = fit_grid_point(data, cruel, n_train, reps, cfg, seed, ckpt, device)
            runs.append(
                {
                    "N": n_train,
                    "r": reps,
                    "attempts": [attempts(sc, sup) for sc, sup in zip(scores, supports)],
                    "true_bit_rank": [
                        float(np.mean(np.argsort(np.argsort(-sc))[sup])) if sup.size else float("nan")
                        for sc, sup in zip(scores, supports)
                    ],
                }
            )
    write_json(
        job.output.attempts,
        {
            "cruel_columns": cruel.tolist(),
            "cruel_bits": [int(s.size) for s in supports],
            "exhaustive_attempts": [expected_exhaustive_attempts(cruel.size, s.size) for s in supports],
            "runs": runs,
        },
    )
