"""SYNTHETIC chemical shifts: a hidden deterministic function of each atom's topological environment.

No NMR data ships in a PyPI package, so the embedded default makes its own. These shifts are NOT
experimental: additive increment rules in the spirit of textbook tables (brief §5). ¹³C: a base by
element neighbourhood and hybridisation, α and β substituent increments, ring terms. ¹H: a base by
the carrier atom's type plus increments from the carrier's neighbours. Every term depends only on
the topological environment, so symmetry-equivalent atoms get identical shifts. Solvent groups add
offsets (larger for exchangeable OH/NH protons in DMSO-d6).
"""

from __future__ import annotations

import numpy as np
from rdkit import Chem

SOLVENT_GROUPS = ("CDCl3", "DMSO-d6", "other")
# α increments to a carbon from a neighbouring heavy atom (ppm), β increments from atoms two bonds away.
ALPHA_13C = {"C": 9.1, "N": 28.0, "O": 49.0, "F": 68.0, "Cl": 31.0, "S": 11.0, "P": 9.0}
BETA_13C = {"C": 9.4, "N": 11.0, "O": 10.1, "F": 7.8, "Cl": 10.0, "S": 11.0, "P": 3.0}
ELECTRONEGATIVITY = {"H": 2.20, "C": 2.55, "N": 3.04, "O": 3.44, "F": 3.98, "Cl": 3.16, "S": 2.58, "P": 2.19}
SOLVENT_OFFSET_13C = {"CDCl3": 0.0, "DMSO-d6": -0.6, "other": 0.3}
SOLVENT_OFFSET_1H = {"CDCl3": 0.0, "DMSO-d6": 0.05, "other": -0.03}
EXCHANGEABLE_OFFSET_1H = {"CDCl3": 0.0, "DMSO-d6": 2.2, "other": 0.8}


def _carbon_shift(atom: Chem.Atom) -> float:
    """¹³C base by hybridisation plus α/β increments (saturating for several heteroatoms), carbonyl and ring terms."""
    hyb = atom.GetHybridization()
    if atom.GetIsAromatic():
        shift = 128.5
    elif hyb == Chem.HybridizationType.SP2:
        shift = 123.0
    elif hyb == Chem.HybridizationType.SP:
        shift = 72.0
    else:
        shift = -2.3
    n_hetero = 0
    for bond in atom.GetBonds():
        other = bond.GetOtherAtom(atom)
        sym = other.GetSymbol()
        if sym == "H":
            continue
        scale = 0.35 if atom.GetIsAromatic() or hyb != Chem.HybridizationType.SP3 else 1.0
        hetero = sym != "C"
        shift += scale * ALPHA_13C.get(sym, 5.0) * (0.5**n_hetero if hetero else 1.0)
        n_hetero += hetero
        if bond.GetBondType() == Chem.BondType.DOUBLE and sym == "O":
            shift += 45.0
        if bond.GetBondType() == Chem.BondType.TRIPLE and sym == "N":
            shift += 20.0
        for second in other.GetNeighbors():
            if second.GetIdx() != atom.GetIdx() and second.GetSymbol() != "H":
                shift += scale * 0.5 * BETA_13C.get(second.GetSymbol(), 2.0)
    if atom.IsInRing() and not atom.GetIsAromatic():
        shift += 4.0 - 1.5 * (atom.GetOwningMol().GetRingInfo().MinAtomRingSize(atom.GetIdx()) == 3) * 8.0
    return shift


def _proton_shift(hydrogen: Chem.Atom) -> float:
    """¹H base by carrier type plus electronegativity increments of the carrier's neighbours."""
    carrier = hydrogen.GetNeighbors()[0]
    sym = carrier.GetSymbol()
    if sym == "O":
        acid = any(
            n.GetSymbol() == "C" and any(b.GetBondType() == Chem.BondType.DOUBLE for b in n.GetBonds())
            for n in carrier.GetNeighbors()
        )
        return 11.0 if acid else 2.1 + 2.6 * any(n.GetIsAromatic() for n in carrier.GetNeighbors())
    if sym == "N":
        return 1.6 + 4.2 * any(
            n.GetIsAromatic() or n.GetHybridization() == Chem.HybridizationType.SP2 for n in carrier.GetNeighbors()
        )
    if sym != "C":
        return 1.5
    if carrier.GetIsAromatic():
        shift = 7.26
    elif carrier.GetHybridization() == Chem.HybridizationType.SP2:
        shift = 9.6 if any(n.GetSymbol() == "O" for n in carrier.GetNeighbors()) else 5.25
    elif carrier.GetHybridization() == Chem.HybridizationType.SP:
        shift = 2.4
    else:
        shift = 0.23 + 0.25 * (4 - carrier.GetTotalNumHs())
    for other in carrier.GetNeighbors():
        if other.GetSymbol() == "H":
            continue
        shift += 0.42 * (ELECTRONEGATIVITY.get(other.GetSymbol(), 2.5) - 2.55)
        if other.GetIsAromatic() and not carrier.GetIsAromatic():
            shift += 0.9
        if any(b.GetBondType() == Chem.BondType.DOUBLE for b in other.GetBonds()) and not carrier.GetIsAromatic():
            shift += 0.6
        for second in other.GetNeighbors():
            if (
                carrier.GetIsAromatic()
                and second.GetIdx() != carrier.GetIdx()
                and not second.GetIsAromatic()
                and second.GetSymbol() != "H"
            ):
                shift += 0.12 * len(second.GetNeighbors()) - 0.25 * second.GetTotalNumHs() + 0.1
            if second.GetIdx() != carrier.GetIdx() and second.GetSymbol() not in ("C", "H"):
                shift += (
                    0.15
                    * (ELECTRONEGATIVITY.get(second.GetSymbol(), 2.5) - 2.55)
                    * (1.5 if carrier.GetIsAromatic() else 1.0)
                )
    return shift


def teacher_shifts(mol_h: Chem.Mol, solvent: str) -> dict[str, np.ndarray]:
    """Noise-free synthetic shifts of every C and H of ``mol_h`` (explicit H), NaN elsewhere, per nucleus."""
    c13 = np.full(mol_h.GetNumAtoms(), np.nan)
    h1 = np.full(mol_h.GetNumAtoms(), np.nan)
    for atom in mol_h.GetAtoms():
        if atom.GetSymbol() == "C":
            c13[atom.GetIdx()] = _carbon_shift(atom) + SOLVENT_OFFSET_13C[solvent]
        elif atom.GetSymbol() == "H":
            carrier = atom.GetNeighbors()[0]
            offset = (
                EXCHANGEABLE_OFFSET_1H[solvent] if carrier.GetSymbol() in ("O", "N") else SOLVENT_OFFSET_1H[solvent]
            )
            h1[atom.GetIdx()] = _proton_shift(atom) + offset
    return {"13C": c13, "1H": h1}


def noisy_shifts(
    mol_h: Chem.Mol, solvent: str, classes: np.ndarray, rng: np.random.Generator, noise: dict[str, float]
) -> dict[str, np.ndarray]:
    """Teacher shifts plus N(0, sd) noise drawn once per symmetry class, so equivalent atoms stay equal."""
    out = teacher_shifts(mol_h, solvent)
    per_class = {nucleus: rng.normal(0.0, noise[nucleus], size=int(classes.max()) + 1) for nucleus in out}
    return {nucleus: values + per_class[nucleus][classes] for nucleus, values in out.items()}
