"""Stage: pretrain the backbone, then run every method's continual sequence for every seed.

The backbone (an MLP from repro.learning.smallnets) is pretrained with labels on the clean train split (the stand-in for
a pretrained ViT); the tasks are a domain sequence of the same digits (repro.data.images.derived). Each
(method, seed) sequence starts from that seed's pretrained backbone. Writes the accuracy matrices, the energy
diagnostics of the bases and, for LoDA and seed 0, the moments and recalibration systems the checks verify.
"""

from __future__ import annotations

import copy
import logging
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from repro.data.images import read_images
from repro.data.images.derived import domain_sequence
from repro.learning.smallnets import MLP, Task, fit
from repro.learning.training import fingerprint_of
from repro.papers.loda.continual import ContinualRun
from repro.workflow.io import atomic_path, write_json, write_npz

log = logging.getLogger(__name__)


def flat(x: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(x.reshape(len(x), -1), dtype=torch.float32)


def load_tasks(path: str, source: str, domains: list[str], seed: int):
    """(clean train x, y, clean test x, y, tasks): each domain gets its own shard of the train split."""
    data = read_images(path, source)
    train, test = data.subset("train"), data.subset("test")
    tr = domain_sequence(train.images, train.labels, domains, seed, disjoint=True)
    te = domain_sequence(test.images, test.labels, domains, seed + 1)
    tasks = [Task.from_arrays(a, b, c, d) for (a, b), (c, d) in zip(tr, te)]
    return flat(train.images), torch.as_tensor(train.labels), tasks


def pretrain(x: torch.Tensor, y: torch.Tensor, s: dict, seed: int, checkpoint: Path, fingerprint: str) -> MLP:
    torch.manual_seed(seed)
    model = MLP(x.shape[1], s["hidden"], int(y.max()) + 1)
    p = s["pretrain"]
    fit(
        model,
        x,
        y,
        loss="ce",
        epochs=p["epochs"],
        batch_size=p["batch_size"],
        lr=p["lr"],
        seed=seed,
        checkpoint=checkpoint,
        checkpoint_every=p["epochs"],
        fingerprint=fingerprint,
        desc=f"pretrain seed {seed}",
    )
    return model


def main(job) -> None:
    s = job.params.settings
    torch.set_num_threads(max(1, int(job.threads)))
    x_clean, y_clean, tasks = load_tasks(job.input.images, s["source"], s["domains"], s["data_seed"])
    ckpt = Path(job.params.checkpoints)
    ckpt.mkdir(parents=True, exist_ok=True)
    fingerprint = fingerprint_of({"settings": s}, getattr(job.input, "code", []))
    arrays, energy_rows, systems = {}, [], {}
    for seed in s["seeds"]:
        backbone = pretrain(x_clean, y_clean, s, seed, ckpt / f"pretrain_{seed}.pt", fingerprint)
        for method in s["methods"]:
            run = ContinualRun(copy.deepcopy(backbone), method, s["lora"], seed, x_clean)
            result = run.run(tasks, ckpt, fingerprint)
            arrays[f"{method}/{seed}/acc"] = result.acc
            arrays[f"{method}/{seed}/learned_correct"] = result.learned_correct
            energy_rows += [r | {"method": method, "seed": seed} for r in result.energies]
            if method == "loda" and seed == s["seeds"][0]:
                systems = {f"task{t}/{k}": v for t, d in enumerate(result.systems) for k, v in d.items()}
            log.info("%s seed %d: final accuracy %.3f", method, seed, result.acc[-1].mean())
    arrays["test/y"] = torch.cat([t.y_test for t in tasks]).numpy()
    arrays["train/y"] = torch.cat([t.y_train for t in tasks]).numpy()
    write_npz(job.output.runs, arrays)
    write_npz(job.output.systems, systems)
    with atomic_path(job.output.energies) as tmp:
        pd.DataFrame(energy_rows).to_parquet(tmp, index=False)
    write_json(job.output.meta, {"methods": s["methods"], "seeds": s["seeds"], "domains": s["domains"]})
    shutil.rmtree(ckpt, ignore_errors=True)
