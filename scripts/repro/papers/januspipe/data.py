"""Stage: rattled and strained metal cells labelled with ase's EMT calculator (energies in eV, forces eV/Å).

Every configuration has the same number of atoms (a cubic fcc cell repeated 2 x 2 x 2: 32 atoms), so that
micro-batches stack without padding: elements Cu, Ni, Al and a random Cu-Ni alloy, each cell strained by
up to ``strain`` and rattled by ``rattle`` Å. Output ``configs.npz`` (positions, cells, numbers, energy,
forces, split) and its manifest.
"""

from __future__ import annotations

import numpy as np
from ase.build import bulk
from ase.calculators.emt import EMT

from repro.workflow.io import atomic_path, sha256, write_json

LATTICE = {"Cu": 3.61, "Ni": 3.52, "Al": 4.05}


def configuration(rng: np.random.Generator, kind: str, settings: dict):
    element = "Cu" if kind == "CuNi" else kind
    atoms = bulk(element, "fcc", a=LATTICE[element], cubic=True).repeat((2, 2, 2))
    if kind == "CuNi":
        symbols = np.where(rng.random(len(atoms)) < 0.5, "Cu", "Ni")
        atoms.set_chemical_symbols(symbols.tolist())
    strain = np.eye(3) + rng.uniform(-settings["strain"], settings["strain"], (3, 3))
    atoms.set_cell(atoms.cell @ (0.5 * (strain + strain.T)), scale_atoms=True)
    atoms.rattle(stdev=settings["rattle"], seed=int(rng.integers(2**31)))
    atoms.calc = EMT()
    return atoms, atoms.get_potential_energy(), atoms.get_forces()


def main(job) -> None:
    settings = job.params.settings["generate"]
    rng = np.random.default_rng([settings["seed"], 11])
    records = {k: [] for k in ("positions", "cells", "numbers", "energy", "forces")}
    for kind in settings["kinds"]:
        for _ in range(settings["per_kind"]):
            atoms, energy, forces = configuration(rng, kind, settings)
            records["positions"].append(atoms.positions)
            records["cells"].append(np.asarray(atoms.cell))
            records["numbers"].append(atoms.numbers)
            records["energy"].append(energy)
            records["forces"].append(forces)
    arrays = {k: np.asarray(v) for k, v in records.items()}
    n = len(arrays["energy"])
    split = np.zeros(n, np.int8)
    split[np.random.default_rng([settings["seed"], 12]).permutation(n)[: round(settings["test_fraction"] * n)]] = 1
    arrays["split"] = split
    with atomic_path(job.output.configs) as tmp:
        np.savez(tmp, **arrays)
    write_json(
        job.output.manifest,
        {
            "source": "embedded",
            "generator": "repro.papers.januspipe.data (ase EMT)",
            "settings": settings,
            "configurations": n,
            "atoms_per_configuration": int(arrays["positions"].shape[1]),
            "files": {"configs.npz": {"sha256": sha256(job.output.configs)}},
        },
    )
