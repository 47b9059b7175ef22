"""Backbone windows of real chains and the continuous structure representation the co-design model generates.

A window is ``width`` consecutive residues of one chain of the structures source (standard amino acids only,
no chain break: every C(i)-N(i+1) bond below 2 Å). Its structure is the N/CA/C backbone in internal
coordinates, the atoms taken in chain order N0 CA0 C0 N1 ...: 3W - 1 bond lengths, 3W - 2 bond angles and
3W - 3 torsions (psi, omega, phi repeating). The model generates the torsions: its continuous vector is the
cosine and sine of every torsion (a torus point embedded in the plane, so periodicity costs nothing),
standardised by the training windows' mean and spread. A generated vector becomes a backbone by reading each
torsion as atan2(sin, cos) and placing the atoms one by one (natural extension reference frame) with Engh &
Huber's ideal bond lengths and angles. (Generating the bond lengths and angles as well was tried at the same
training budget and learned less: see docs/papers/geocoupling.md.)
"""

from __future__ import annotations

import numpy as np

from repro.metrics.protein_geometry import ANGLE, BOND, dihedral, place_atom

AMINO = "ACDEFGHIKLMNPQRSTVWY"
MASK = len(AMINO)  # the masked sequence token
PEPTIDE_BREAK = 2.0  # Å: a longer C(i)-N(i+1) distance is a gap in the chain


def windows(chains, split: str, width: int, stride: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(sequence indices (n, W) int8, backbones (n, W, 3, 3) float64 Å, window ids) of ``split``'s chains."""
    seqs, backbones, ids = [], [], []
    for chain in chains:
        if chain.split != split:
            continue
        bb = np.asarray(chain.backbone, dtype=np.float64)
        peptide = np.linalg.norm(bb[1:, 0] - bb[:-1, 2], axis=-1)
        for start in range(0, len(bb) - width + 1, stride):
            residues = chain.sequence[start : start + width]
            if any(r not in AMINO for r in residues) or np.any(peptide[start : start + width - 1] > PEPTIDE_BREAK):
                continue
            seqs.append([AMINO.index(r) for r in residues])
            backbones.append(bb[start : start + width])
            ids.append(f"{chain.chain_id}:{start}")
    return (
        np.array(seqs, dtype=np.int8).reshape(-1, width),
        np.array(backbones, dtype=np.float64).reshape(-1, width, 3, 3),
        ids,
    )


def internal(backbones: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bond lengths (n, 3W-1) Å, bond angles (n, 3W-2) rad, torsions (n, 3W-3) rad) of (n, W, 3, 3) backbones."""
    atoms = np.asarray(backbones, dtype=np.float64).reshape(len(backbones), -1, 3)
    bonds = np.diff(atoms, axis=1)
    lengths = np.linalg.norm(bonds, axis=-1)
    u, v = -bonds[:, :-1], bonds[:, 1:]
    cos = np.sum(u * v, -1) / (lengths[:, :-1] * lengths[:, 1:])
    angles = np.arccos(np.clip(cos, -1.0, 1.0))
    torsions = dihedral(atoms[:, :-3], atoms[:, 1:-2], atoms[:, 2:-1], atoms[:, 3:])
    return lengths, angles, torsions


def features(backbones: np.ndarray) -> np.ndarray:
    """Unstandardised continuous vector (n, 2 (3W - 3)): cos(torsions), sin(torsions)."""
    _, _, torsions = internal(backbones)
    return np.concatenate([np.cos(torsions), np.sin(torsions)], axis=1)


def feature_size(width: int) -> int:
    return 2 * (3 * width - 3)


def ideal_geometry(width: int) -> tuple[np.ndarray, np.ndarray]:
    """Engh & Huber bond lengths (3W - 1,) and bond angles (3W - 2,) along N0 CA0 C0 N1 ..."""
    atoms = 3 * width
    lengths = np.tile([BOND["N-CA"], BOND["CA-C"], BOND["C-N"]], width)[: atoms - 1]
    angles = np.tile([ANGLE["N-CA-C"], ANGLE["CA-C-N"], ANGLE["C-N-CA"]], width)[: atoms - 2]
    return lengths, angles


def build(vectors: np.ndarray, width: int) -> np.ndarray:
    """Backbones (n, W, 3, 3) from unstandardised vectors (n, D) of torsion cosines and sines: first atom at the
    origin, second on +x, third in the xy plane, then each atom placed from its torsion and the ideal geometry."""
    z = np.asarray(vectors, dtype=np.float64)
    n, atoms = len(z), 3 * width
    torsions = np.arctan2(z[:, atoms - 3 :], z[:, : atoms - 3])
    lengths, angles = (np.broadcast_to(v, (n, len(v))) for v in ideal_geometry(width))
    out = np.zeros((n, atoms, 3))
    out[:, 1, 0] = lengths[:, 0]
    out[:, 2] = out[:, 1] + lengths[:, 1:2] * np.stack([-np.cos(angles[:, 0]), np.sin(angles[:, 0]), np.zeros(n)], -1)
    for i in range(3, atoms):
        out[:, i] = place_atom(out[:, i - 3], out[:, i - 2], out[:, i - 1], lengths[:, i - 1], angles[:, i - 2],
                               torsions[:, i - 3])  # fmt: skip
    return out.reshape(n, width, 3, 3)


class Standardiser:
    """Per-feature mean and spread of the training windows (a spread of 0 would be kept at 1)."""

    def __init__(self, mean: np.ndarray, scale: np.ndarray):
        self.mean, self.scale = np.asarray(mean, np.float64), np.asarray(scale, np.float64)

    @classmethod
    def fit(cls, vectors: np.ndarray) -> Standardiser:
        scale = vectors.std(axis=0)
        return cls(vectors.mean(axis=0), np.where(scale > 0, scale, 1.0))

    def encode(self, backbones: np.ndarray) -> np.ndarray:
        return (features(backbones) - self.mean) / self.scale

    def decode(self, standardised: np.ndarray, width: int) -> np.ndarray:
        return build(np.asarray(standardised, np.float64) * self.scale + self.mean, width)
