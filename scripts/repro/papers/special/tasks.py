"""The domain-incremental tasks of SPECIAL's embedded default: one digits source under a seeded domain sequence."""

from __future__ import annotations

import torch

from repro.data.images import read_images
from repro.data.images.derived import domain_sequence
from repro.papers.special.federated import Task


def load_tasks(path: str, source: str, domains: list[str], seed: int) -> list[Task]:
    """One task per domain: the source's train split and test split under the same domain transform."""
    data = read_images(path, source)
    train, test = data.subset("train"), data.subset("test")
    tr = domain_sequence(train.images, train.labels, domains, seed)
    te = domain_sequence(test.images, test.labels, domains, seed + 1)
    return [
        Task(
            torch.as_tensor(xa.reshape(len(xa), -1)),
            torch.as_tensor(ya),
            torch.as_tensor(xb.reshape(len(xb), -1)),
            torch.as_tensor(yb),
        )
        for (xa, ya), (xb, yb) in zip(tr, te)
    ]
