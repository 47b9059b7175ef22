"""The domain-incremental tasks of SPECIAL: one per domain, from the digits file or from DomainNet lists.

Embedded default: one digits source of data/images/digits.npz under a seeded domain sequence
(repro.data.images.derived). Full scale (``source: domainnet``): the DomainNet list files under the folder
``images`` names (repro.data.images.benchmarks.read_domainnet), one task per listed DomainNet domain, images
resized to ``image_size`` and flattened for the MLP.
"""

from __future__ import annotations

from repro.data.images import read_images
from repro.data.images.benchmarks import ImageIndex, load_images, read_domainnet
from repro.data.images.derived import domain_sequence
from repro.learning.smallnets import Task


def domainnet_tasks(root: str, domains: list[str], size: tuple[int, int]) -> list[Task]:
    """One task per DomainNet domain from its train and test lists."""
    index = read_domainnet(root, domains)
    tasks = []
    for d in range(len(domains)):
        arrays = []
        for split in ("train", "test"):
            keep = (index.split == split) & (index.attributes["domain"] == d)
            part = ImageIndex(index.root, index.paths[keep], index.labels[keep], index.split[keep], index.classes)
            arrays += [load_images(part, size), part.labels]
        tasks.append(Task.from_arrays(*arrays))
    return tasks


def load_tasks(path: str, source: str, domains: list[str], seed: int, size: tuple[int, int] = (32, 32)) -> list[Task]:
    """One task per domain: train split and test split under the same domain transform (or DomainNet domain)."""
    if source == "domainnet":
        return domainnet_tasks(path, domains, size)
    data = read_images(path, source)
    train, test = data.subset("train"), data.subset("test")
    tr = domain_sequence(train.images, train.labels, domains, seed)
    te = domain_sequence(test.images, test.labels, domains, seed + 1)
    return [Task.from_arrays(xa, ya, xb, yb) for (xa, ya), (xb, yb) in zip(tr, te)]
