"""The template library: ase-built monolayers, their projected atomic columns and pymatgen structures.

Every template is a honeycomb projection (two columns per hexagonal cell): graphene and h-BN (one atom per
column), 2H transition-metal dichalcogenides (a metal column and a column of two chalcogens). Column
weight = sum of Z^1.7 over the atoms the beam passes (the incoherent HAADF contrast).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ase import Atoms
from ase.build import graphene, mx2

VACUUM = 15.0
Z_EXPONENT = 1.7


@dataclass(frozen=True)
class Template:
    name: str
    a: float
    kind: str  # "graphene" or "2H"
    formula: str

    def atoms(self, a: float | None = None) -> Atoms:
        """The primitive cell at lattice constant ``a`` (default: the template's), vacuum along c."""
        a = self.a if a is None else a
        if self.kind == "graphene":
            atoms = graphene(formula=self.formula, a=a, vacuum=VACUUM / 2)
        else:
            atoms = mx2(formula=self.formula, kind="2H", a=a, thickness=3.19, vacuum=VACUUM / 2)
        atoms.pbc = True
        return atoms

    def columns(self, a: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(fractional in-plane positions (k, 2), weights (k,)): atoms merged when they share (x, y)."""
        atoms = self.atoms(a)
        frac = atoms.get_scaled_positions()[:, :2] % 1.0
        keys = np.round(frac, 3) % 1.0
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
        weights = np.zeros(len(unique))
        np.add.at(weights, inverse.ravel(), atoms.numbers.astype(float) ** Z_EXPONENT)
        return unique, weights

    def intensity_ratio(self) -> float:
        """Dimmer over brighter column weight (order-free, what an image can tell)."""
        _, w = self.columns()
        return float(np.min(w) / np.max(w))


LIBRARY = {
    t.name: t
    for t in (
        Template("graphene", 2.46, "graphene", "C2"),
        Template("hBN", 2.50, "graphene", "BN"),
        Template("MoS2", 3.18, "2H", "MoS2"),
        Template("WS2", 3.18, "2H", "WS2"),
        Template("MoSe2", 3.32, "2H", "MoSe2"),
        Template("WSe2", 3.32, "2H", "WSe2"),
    )
}


def hexagonal_vectors(a: float, theta: float) -> np.ndarray:
    """In-plane lattice vectors (rows) of a hexagonal cell with 120° between them, rotated by theta."""
    base = np.array([[a, 0.0], [-a / 2, a * np.sqrt(3) / 2]])
    c, s = np.cos(theta), np.sin(theta)
    return base @ np.array([[c, s], [-s, c]])


def structure(name: str, a: float):
    """pymatgen Structure of template ``name`` at lattice constant ``a`` (what a reconstruction outputs)."""
    from pymatgen.io.ase import AseAtomsAdaptor

    return AseAtomsAdaptor.get_structure(LIBRARY[name].atoms(a))
