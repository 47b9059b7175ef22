"""The canonical mesh store's keys (see repro.papers.geo_newf.data) and its reader, with errors naming the store
and the sample; free of scikit-fem so that training and evaluation do not need it."""

from __future__ import annotations

import numpy as np

from repro.workflow.io import InputError
from repro.workflow.stores import open_zarr_group

ARRAYS = ("nodes", "cells", "facets", "facet_side", "dirichlet", "load", "source", "u", "dirichlet_sides", "neumann")
ATTRS = ("family", "amplitude", "newton_iterations")


def read_split(path: str, split: str) -> list[dict]:
    """Every sample of ``split`` as a dict of numpy arrays and attributes, in index order."""
    group = open_zarr_group(path, split)
    samples = []
    for key in sorted(group.group_keys(), key=int):
        g = group[key]
        missing = [a for a in ARRAYS if a not in g] + [a for a in ATTRS if a not in g.attrs]
        if missing:
            raise InputError(path, f"sample {split}/{key} lacks {missing}")
        sample = {a: np.asarray(g[a][...]) for a in ARRAYS} | {a: g.attrs[a] for a in ATTRS}
        n = len(sample["nodes"])
        if sample["cells"].max() >= n or any(len(sample[a]) != n for a in ("dirichlet", "load", "source", "u")):
            raise InputError(path, f"sample {split}/{key}: node arrays disagree with {n} nodes")
        samples.append(sample)
    if not samples:
        raise InputError(path, f"split {split!r} holds no samples")
    return samples


def by_family(samples: list[dict]) -> dict[str, list[int]]:
    """Indices of the samples of each domain family (one mesh topology per family)."""
    out: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        out.setdefault(str(s["family"]), []).append(i)
    return out
