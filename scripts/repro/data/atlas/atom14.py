"""The atom14 layout: per residue up to 14 heavy atoms in a fixed order per amino acid.

The order is AlphaFold's (backbone N, CA, C, O first, then the side chain); MDGen stores
trajectories in this layout. Force-field naming variants (CHARMM HSD/HSE/HSP, AMBER
HIE/HID/HIP/CYX, CHARMM ILE CD, terminal OT1) are mapped onto the standard names here.
"""

from __future__ import annotations

import numpy as np

ATOM14: dict[str, tuple[str, ...]] = {
    "ALA": ("N", "CA", "C", "O", "CB"),
    "ARG": ("N", "CA", "C", "O", "CB", "CG", "CD", "NE", "CZ", "NH1", "NH2"),
    "ASN": ("N", "CA", "C", "O", "CB", "CG", "OD1", "ND2"),
    "ASP": ("N", "CA", "C", "O", "CB", "CG", "OD1", "OD2"),
    "CYS": ("N", "CA", "C", "O", "CB", "SG"),
    "GLN": ("N", "CA", "C", "O", "CB", "CG", "CD", "OE1", "NE2"),
    "GLU": ("N", "CA", "C", "O", "CB", "CG", "CD", "OE1", "OE2"),
    "GLY": ("N", "CA", "C", "O"),
    "HIS": ("N", "CA", "C", "O", "CB", "CG", "ND1", "CD2", "CE1", "NE2"),
    "ILE": ("N", "CA", "C", "O", "CB", "CG1", "CG2", "CD1"),
    "LEU": ("N", "CA", "C", "O", "CB", "CG", "CD1", "CD2"),
    "LYS": ("N", "CA", "C", "O", "CB", "CG", "CD", "CE", "NZ"),
    "MET": ("N", "CA", "C", "O", "CB", "CG", "SD", "CE"),
    "PHE": ("N", "CA", "C", "O", "CB", "CG", "CD1", "CD2", "CE1", "CE2", "CZ"),
    "PRO": ("N", "CA", "C", "O", "CB", "CG", "CD"),
    "SER": ("N", "CA", "C", "O", "CB", "OG"),
    "THR": ("N", "CA", "C", "O", "CB", "OG1", "CG2"),
    "TRP": ("N", "CA", "C", "O", "CB", "CG", "CD1", "CD2", "NE1", "CE2", "CE3", "CZ2", "CZ3", "CH2"),
    "TYR": ("N", "CA", "C", "O", "CB", "CG", "CD1", "CD2", "CE1", "CE2", "CZ", "OH"),
    "VAL": ("N", "CA", "C", "O", "CB", "CG1", "CG2"),
}
RESIDUE_ALIASES = {
    "HSD": "HIS",
    "HSE": "HIS",
    "HSP": "HIS",
    "HID": "HIS",
    "HIE": "HIS",
    "HIP": "HIS",
    "HISD": "HIS",
    "HISE": "HIS",
    "HISH": "HIS",
    "CYX": "CYS",
    "CYM": "CYS",
    "CYSH": "CYS",
    "ASH": "ASP",
    "GLH": "GLU",
    "LYN": "LYS",
    "MSE": "MET",
}
ATOM_ALIASES = {("ILE", "CD"): "CD1", ("*", "OT1"): "O", ("*", "O1"): "O", ("MET", "SE"): "SD"}


def standard_residue(name: str) -> str | None:
    """Standard three-letter name of a residue, or None when it is not an amino acid."""
    name = RESIDUE_ALIASES.get(name, name)
    return name if name in ATOM14 else None


def atom14_slot(residue: str, atom: str) -> int | None:
    """Index of ``atom`` in the atom14 order of standard ``residue`` (None: not an atom14 atom)."""
    atom = ATOM_ALIASES.get((residue, atom), ATOM_ALIASES.get(("*", atom), atom))
    names = ATOM14[residue]
    return names.index(atom) if atom in names else None


def atom14_index(residues: list[tuple[str, list[tuple[int, str]]]]) -> np.ndarray:
    """Map atom14 slots to atom positions: ``[L, 14]`` int, -1 where the residue lacks the atom.

    ``residues`` lists, per amino-acid residue, its standard name and (position, atom name)
    of its selected atoms, positions counting within the loaded atom subset.
    """
    index = np.full((len(residues), 14), -1, dtype=np.int64)
    for i, (resname, atoms) in enumerate(residues):
        for position, atom in atoms:
            slot = atom14_slot(resname, atom)
            if slot is not None:
                index[i, slot] = position
    return index


def gather_atom14(xyz: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``xyz [T, N, 3]`` -> ``[T, L, 14, 3]`` with NaN in the slots a residue does not have."""
    out = xyz[:, np.clip(index, 0, None), :]
    out[:, index < 0, :] = np.nan
    return out
