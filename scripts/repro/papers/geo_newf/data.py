"""Stage: meshes, boundary data and reference solutions of every split in one zarr store.

Canonical layout, ``meshes.zarr/<split>/<index>/``: arrays ``nodes`` (n, 2), ``cells`` (m, 3), ``facets``
(b, 2) boundary facets, ``facet_side`` (b,) (0 left, 1 right, 2 bottom, 3 top), ``dirichlet`` (n,) bool,
``load`` (n,), ``source`` (n,), ``u`` (n,) reference P1 solution, ``dirichlet_sides`` (4,), ``neumann`` (4,);
attributes ``family``, ``amplitude``, ``newton_iterations``. Splits: ``train`` and ``test_id`` (warped unit
squares up to the in-distribution amplitude), ``test_ood`` (stronger warps and L-shaped domains).
``manifest.json`` records the settings and, per split, the mesh count and the reference solver's iterations.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import zarr

from repro.papers.geo_newf.meshes import make_sample
from repro.papers.geo_newf.store import ARRAYS, ATTRS
from repro.workflow.io import atomic_path, write_json
from repro.workflow.progress import Progress

LOG = logging.getLogger(__name__)


def split_plan(settings: dict) -> dict[str, list[tuple[str, float, float]]]:
    """Per split: (family, lowest, highest warp amplitude) of each sample."""
    s = settings["splits"]
    lo, hi, ood = 0.0, float(settings["id_amplitude"]), float(settings["ood_amplitude"])
    n_lshape = int(s["test_ood_lshape"])
    return {
        "train": [("square", lo, hi)] * int(s["train"]),
        "test_id": [("square", lo, hi)] * int(s["test_id"]),
        "test_ood": [("square", ood, ood)] * (int(s["test_ood"]) - n_lshape) + [("lshape", lo, lo)] * n_lshape,
    }


def main(job) -> None:
    settings = job.params.settings
    plan = split_plan(settings)
    progress = Progress("geo-newf meshes", total=sum(len(v) for v in plan.values()), unit="meshes", logger=LOG)
    summary = {}
    with atomic_path(job.output.meshes) as tmp:
        root = zarr.open_group(str(tmp), mode="w")
        for split, items in plan.items():
            group = root.create_group(split)
            rng = np.random.default_rng([int(settings["data_seed"]), len(split), sum(map(ord, split))])
            iterations = []
            for i, (family, low, high) in enumerate(items):
                sample = dataclasses.asdict(make_sample(family, rng.uniform(low, high), settings, rng))
                g = group.create_group(str(i))
                for key in ARRAYS:
                    g.create_array(key, data=np.asarray(sample[key]))
                g.attrs.update({k: sample[k] for k in ATTRS})
                iterations.append(sample["newton_iterations"])
                progress.update(split=split)
            summary[split] = {"meshes": len(items), "max_reference_newton_iterations": int(np.max(iterations))}
    write_json(
        job.output.manifest,
        {"source": "embedded", "generator": "repro.papers.geo_newf.data", "settings": settings, "splits": summary},
    )
