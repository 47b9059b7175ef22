"""Monolayer structures: the ground truths the generator images, and the structures a reconstruction builds.

Ground truths (embedded default) are ase-built monolayers named ``<formula>-<phase>``: graphene and h-BN
(``graphene`` phase: two single-atom columns per hexagonal cell), 2H transition-metal dichalcogenides (a
metal column and a column of two stacked chalcogens) and 1T ones (a metal column and two single-chalcogen
columns, one above and one below the plane). The reconstruction knows none of them: it builds a structure
from a 2-D lattice, basis sites in fractional coordinates and a column content per site (an element and how
many atoms of it the beam passes), placing heights by a bond-length rule (:func:`structure_from_columns`).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

VACUUM = 15.0  # Å of vacuum along c
Z_EXPONENT = 1.7  # incoherent HAADF contrast of the generator, and the exponent reconstructions assume


@dataclass(frozen=True)
class Truth:
    """One ground-truth family: formula (ase) and phase, equilibrium lattice constant."""

    formula: str
    phase: str  # graphene, 2H or 1T
    a: float

    @property
    def name(self) -> str:
        return f"{self.formula}-{self.phase}"

    def atoms(self, a: float | None = None):
        from ase.build import graphene, mx2

        a = self.a if a is None else a
        if self.phase == "graphene":
            atoms = graphene(formula=self.formula, a=a, vacuum=VACUUM / 2)
        else:
            atoms = mx2(formula=self.formula, kind=self.phase, a=a, thickness=thickness(self.formula, a),
                        vacuum=VACUUM / 2)  # fmt: skip
        atoms.pbc = True
        return atoms


def thickness(formula: str, a: float) -> float:
    """Chalcogen-chalcogen height (Å) of an MX2 layer with covalent-radius bonds at lattice constant ``a``."""
    from ase.data import atomic_numbers, covalent_radii
    from ase.formula import Formula

    metal, chalcogen = (el for el in Formula(formula).count())
    bond = covalent_radii[atomic_numbers[metal]] + covalent_radii[atomic_numbers[chalcogen]]
    return 2 * float(np.sqrt(max(bond**2 - a**2 / 3, 0.25)))


FAMILIES = {
    t.name: t
    for t in (
        Truth("C2", "graphene", 2.46),
        Truth("BN", "graphene", 2.50),
        Truth("MoS2", "2H", 3.18),
        Truth("WS2", "2H", 3.18),
        Truth("MoSe2", "2H", 3.32),
        Truth("WTe2", "2H", 3.55),
        Truth("MoS2", "1T", 3.19),
        Truth("WSe2", "1T", 3.30),
        Truth("MoTe2", "2H", 3.52),
        Truth("NbSe2", "2H", 3.45),
        Truth("TiS2", "1T", 3.40),
    )
}


def to_structure(atoms):
    from pymatgen.io.ase import AseAtomsAdaptor

    return AseAtomsAdaptor.get_structure(atoms)


def columns(structure, decimals: int = 2) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """(fractional in-plane column positions (k, 2), atomic numbers of the atoms in each column): atoms that
    share (x, y) in the cell (to ``decimals`` of a fraction) form one column."""
    frac = np.round(np.asarray(structure.frac_coords)[:, :2] % 1.0, decimals) % 1.0
    keys, inverse = np.unique(frac, axis=0, return_inverse=True)
    numbers = [tuple(sorted(int(structure[i].specie.Z) for i in np.flatnonzero(inverse.ravel() == k)))
               for k in range(len(keys))]  # fmt: skip
    return keys, numbers


def column_weight(numbers, exponent: float = Z_EXPONENT) -> float:
    return float(np.sum(np.asarray(numbers, dtype=float) ** exponent))


@dataclass(frozen=True)
class Content:
    """A column: ``count`` atoms of element ``z`` along the beam."""

    z: int
    count: int

    def weight(self, exponent: float = Z_EXPONENT) -> float:
        return self.count * self.z**exponent


def contents(elements: list[str], max_count: int) -> list[Content]:
    from ase.data import atomic_numbers

    return [Content(atomic_numbers[e], c) for e in elements for c in range(1, max_count + 1)]


@functools.cache
def _orders(size: int, groups: int) -> np.ndarray:
    return np.array(list(itertools.product(range(size), repeat=groups)), dtype=int).reshape(-1, groups)


EXHAUSTIVE = 200_000  # combinations of column contents scored exhaustively; above, a pruned search


def assignments(
    group_intensity: np.ndarray, vocabulary: list[Content], exponent: float, keep: int, scale: float | None
) -> list[tuple[tuple[Content, ...], float]]:
    """The ``keep`` best column contents per intensity group, ranked by the RMS log error of their predicted
    cross-sections (``scale`` Å^2 per unit of Z^exponent) to the measured ones, or, with ``scale`` None (an
    uncalibrated detector), of the intensity ratios only; ties broken towards fewer atoms. Every combination
    is scored when there are at most :data:`EXHAUSTIVE`; otherwise only the combinations of each group's
    ``keep + 2`` best contents under each scale a (group, content) pair implies (:func:`_pruned_orders`)."""
    groups = len(group_intensity)
    measured = np.log(np.maximum(np.asarray(group_intensity, dtype=float), 1e-12))
    weights = np.log([c.weight(exponent) for c in vocabulary]) + (np.log(scale) if scale else 0.0)
    atoms = np.array([c.count for c in vocabulary])
    if len(vocabulary) ** groups <= EXHAUSTIVE:
        order = _orders(len(vocabulary), groups)
    else:
        order = _pruned_orders(measured, weights, keep + 2, scale is None)
    residual = measured[None] - weights[order]
    if scale is None:
        residual -= residual.mean(axis=1, keepdims=True)
    error = np.sqrt(np.mean(residual**2, axis=1)) + 1e-3 * atoms[order].sum(axis=1)
    best = np.argsort(error, kind="stable")[:keep]
    return [(tuple(vocabulary[j] for j in order[b]), float(error[b])) for b in best]


def _pruned_orders(measured: np.ndarray, weights: np.ndarray, per_group: int, relative: bool) -> np.ndarray:
    """Candidate combinations (m, groups) of vocabulary indices: under one log-scale offset the error is a sum over
    groups, so the best combinations lie among each group's ``per_group`` best contents; the offsets tried are
    0 (calibrated) or, uncalibrated, every offset that puts one group exactly on one content."""
    offsets = (measured[:, None] - weights[None]).ravel() if relative else np.zeros(1)
    index = _orders(per_group, len(measured))
    found = []
    for offset in offsets:
        top = np.argsort((measured[:, None] - weights[None] - offset) ** 2, axis=1, kind="stable")[:, :per_group]
        found.append(top[np.arange(len(measured))[None], index])
    return np.unique(np.concatenate(found), axis=0)


def structure_from_columns(vectors: np.ndarray, basis: np.ndarray, site_contents: list[Content]):
    """pymatgen Structure of a monolayer: in-plane lattice ``vectors`` (2, 2) Å, basis sites (k, 2) fractional,
    one column content per site. Heights: a layer of two single-atom columns (graphene, h-BN) is flat. Otherwise
    the heaviest single-atom column (the metal) lies in the plane and every other column's atoms sit at +-h, h
    from covalent radii (the bond to the nearest in-plane metal column): a two-atom column spans -h..+h (2H),
    and single-atom columns of one content alternate +h, -h (1T)."""
    from ase.data import covalent_radii
    from pymatgen.core import Lattice, Structure

    vectors = np.asarray(vectors, dtype=float)
    lattice = Lattice([[*vectors[0], 0.0], [*vectors[1], 0.0], [0.0, 0.0, VACUUM + 4.0]])
    singles = [k for k, c in enumerate(site_contents) if c.count == 1]
    flat = len(site_contents) <= 2 and len(singles) == len(site_contents)
    metal = max(singles, key=lambda k: site_contents[k].z) if singles and not flat else None
    species, coords, flips = [], [], {}
    for k, (site, content) in enumerate(zip(basis, site_contents)):
        if metal is None or k == metal:
            h = 0.0 if content.count == 1 else 1.0
        else:
            delta = (site - basis[metal] + 0.5) % 1.0 - 0.5
            r = float(np.linalg.norm(delta @ vectors))
            bond = covalent_radii[site_contents[metal].z] + covalent_radii[content.z]
            h = float(np.sqrt(max(bond**2 - r**2, 0.25)))
        if content.count == 1 and metal is not None and k != metal:
            heights = [h * (1.0 - 2.0 * flips.get(content, 0))]
            flips[content] = 1 - flips.get(content, 0)
        else:
            heights = [0.0] if content.count == 1 else list(np.linspace(-h, h, content.count))
        for z in heights:
            species.append(content.z)
            coords.append([site[0], site[1], 0.5 + z / lattice.c])
    return Structure(lattice, species, coords)


def in_plane_lattice(structure) -> np.ndarray:
    """(a, b, gamma in degrees) of the Gauss-reduced in-plane lattice of a monolayer cell (c along z)."""
    return reduced_parameters(np.asarray(structure.lattice.matrix)[:2, :2])


def gauss_reduce(vectors: np.ndarray) -> np.ndarray:
    """Lagrange-Gauss reduction of a 2-D basis: the shortest vector, then the shortest independent one."""
    u, v = np.asarray(vectors, dtype=float)
    if u @ u > v @ v:
        u, v = v, u
    while True:
        m = np.round((u @ v) / (u @ u))
        v = v - m * u
        if v @ v >= u @ u:
            return np.array([u, v])
        u, v = v, u


def reduced_parameters(vectors: np.ndarray) -> np.ndarray:
    u, v = gauss_reduce(vectors)
    gamma = np.degrees(np.arccos(np.clip(abs(u @ v) / np.linalg.norm(u) / np.linalg.norm(v), -1, 1)))
    return np.array([np.linalg.norm(u), np.linalg.norm(v), 180.0 - gamma])
