"""Molecule filters, symmetry classes and cached conformers, as in the paper's preprocessing.

The filters follow NMRNet++'s ``filter_nmr_data.py`` (brief §4): no ``*`` or ``.`` in the SMILES,
RDKit sanitisation without warnings, no radicals or isotopes, at most one chiral centre, at most
70 atoms including H, elements within {C, H, O, N, S, P, F, Cl}, and an ETKDG + MMFF conformer.
A failing molecule raises :class:`Rejected` with a short reason so the caller can count it.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np
from rdkit import Chem, RDLogger, rdBase
from rdkit.Chem import AllChem, rdFingerprintGenerator

from repro.workflow.io import atomic_path

log = logging.getLogger(__name__)

ALLOWED_ELEMENTS = frozenset({"C", "H", "O", "N", "S", "P", "F", "Cl"})
MAX_ATOMS = 70
MAX_CHIRAL_CENTRES = 1
CONFORMER_SEED = 42


class Rejected(ValueError):
    """A record the filters drop; ``reason`` is the counted category."""

    def __init__(self, reason: str, detail: str = ""):
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}" if detail else reason)


def _quiet_parse(smiles: str) -> tuple[Chem.Mol | None, str]:
    """Parse with RDKit, capturing its warnings: the paper rejects molecules that sanitise only with warnings."""
    RDLogger.DisableLog("rdApp.*")
    try:
        with rdBase.BlockLogs():
            mol = Chem.MolFromSmiles(smiles, sanitize=False)
            if mol is None:
                return None, "unparsable"
            problems = Chem.DetectChemistryProblems(mol)
            if problems:
                return None, problems[0].GetType()
            Chem.SanitizeMol(mol)
            return mol, ""
    finally:
        RDLogger.EnableLog("rdApp.*")


def filtered_molecule(smiles: str) -> Chem.Mol:
    """Return the sanitised heavy-atom molecule of ``smiles`` or raise :class:`Rejected` with the failing filter."""
    if not isinstance(smiles, str) or not smiles.strip():
        raise Rejected("bad_smiles", "empty")
    if "*" in smiles or "." in smiles:
        raise Rejected("bad_smiles", "wildcard or multiple fragments")
    mol, problem = _quiet_parse(smiles.strip())
    if mol is None:
        raise Rejected("bad_smiles", problem)
    return check_molecule(mol)


def check_molecule(mol: Chem.Mol) -> Chem.Mol:
    """Apply the element, size, radical, isotope and chirality filters to a sanitised molecule."""
    if len(Chem.GetMolFrags(mol)) > 1:
        raise Rejected("bad_smiles", "multiple fragments")
    elements = {a.GetSymbol() for a in mol.GetAtoms()}
    if not elements <= ALLOWED_ELEMENTS:
        raise Rejected("element", ",".join(sorted(elements - ALLOWED_ELEMENTS)))
    if any(a.GetNumRadicalElectrons() for a in mol.GetAtoms()):
        raise Rejected("radical")
    if any(a.GetIsotope() for a in mol.GetAtoms()):
        raise Rejected("isotope")
    n_total = sum(1 + a.GetTotalNumHs() for a in mol.GetAtoms() if a.GetSymbol() != "H")
    n_total += sum(1 for a in mol.GetAtoms() if a.GetSymbol() == "H")
    if n_total > MAX_ATOMS:
        raise Rejected("size", f"{n_total} atoms")
    centres = Chem.FindMolChiralCenters(mol, includeUnassigned=True, useLegacyImplementation=False)
    if len(centres) > MAX_CHIRAL_CENTRES:
        raise Rejected("chirality", f"{len(centres)} chiral centres")
    return mol


def canonical_with_hydrogens(mol: Chem.Mol) -> tuple[str, Chem.Mol, list[int]]:
    """Canonical SMILES, the molecule in canonical atom order with explicit H, and the heavy-atom map.

    ``source_index[i]`` is the index in ``mol`` of canonical heavy atom ``i``; H atoms follow the
    heavy atoms, grouped by their carrier (RDKit ``AddHs`` order), so every record of the same
    compound has the same atom order and can share one cached conformer.
    """
    tagged = Chem.Mol(mol)
    for atom in tagged.GetAtoms():
        atom.SetIntProp("source_index", atom.GetIdx())
    heavy = Chem.RemoveHs(tagged)
    smiles = Chem.MolToSmiles(heavy)
    order = [int(i) for i in heavy.GetPropsAsDict(True, True)["_smilesAtomOutputOrder"]]
    source_index = [heavy.GetAtomWithIdx(j).GetIntProp("source_index") for j in order]
    canon = Chem.AddHs(Chem.MolFromSmiles(smiles))
    return smiles, canon, source_index


def symmetry_classes(mol: Chem.Mol) -> np.ndarray:
    """Topological symmetry class of every atom (RDKit canonical ranks without tie breaking)."""
    return np.asarray(list(Chem.CanonicalRankAtoms(mol, breakTies=False)), dtype=np.int64)


ENVIRONMENT_RADIUS = 3


def environment_codes(mol: Chem.Mol, radius: int = ENVIRONMENT_RADIUS) -> np.ndarray:
    """Atom-centred environment identifiers [N, radius + 1] (Morgan/ECFP per radius; -1 where RDKit drops a duplicate).

    Stored with each record so the HOSE-like lookup baseline runs without RDKit: its codes play the
    role of HOSE spheres (radius 0..3 around the atom).
    """
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=radius)
    output = rdFingerprintGenerator.AdditionalOutput()
    output.AllocateBitInfoMap()
    generator.GetSparseCountFingerprint(mol, additionalOutput=output)
    codes = np.full((mol.GetNumAtoms(), radius + 1), -1, dtype=np.int64)
    for code, hits in output.GetBitInfoMap().items():
        for atom, r in hits:
            codes[atom, r] = code
    return codes


def _embed(canon: Chem.Mol) -> np.ndarray:
    """One ETKDG conformer (seed 42), MMFF-optimised; Rejected('conformer') when either step fails."""
    mol = Chem.Mol(canon)
    params = AllChem.ETKDGv3()
    params.randomSeed = CONFORMER_SEED
    with rdBase.BlockLogs():
        if AllChem.EmbedMolecule(mol, params) != 0:
            raise Rejected("conformer", "ETKDG embedding failed")
        if not AllChem.MMFFHasAllMoleculeParams(mol):
            raise Rejected("conformer", "MMFF parameters missing")
        AllChem.MMFFOptimizeMolecule(mol, maxIters=500)
    return mol.GetConformer().GetPositions().astype(np.float32)


class ConformerCache:
    """Conformers stored once per canonical SMILES under ``root`` (npz), never regenerated silently.

    Why: ETKDG output depends on the RDKit version even with a fixed seed, so coordinates are
    computed once and reused; the RDKit version that made them is stored beside them.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.hits = 0
        self.misses = 0

    def _path(self, smiles: str) -> Path:
        key = hashlib.sha1(smiles.encode()).hexdigest()
        return self.root / key[:2] / f"{key}.npz"

    def coordinates(self, smiles: str, canon: Chem.Mol) -> np.ndarray:
        """Coordinates [N, 3] (Å) of ``canon`` (canonical order, explicit H)."""
        path = self._path(smiles)
        if path.exists():
            stored = np.load(path, allow_pickle=False)
            if str(stored["smiles"]) == smiles and stored["coordinates"].shape[0] == canon.GetNumAtoms():
                self.hits += 1
                if str(stored["rdkit"]) != rdBase.rdkitVersion:
                    log.debug("conformer of %s made with RDKit %s", smiles, stored["rdkit"])
                return stored["coordinates"]
        coords = _embed(canon)
        self.misses += 1
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as handle:
                np.savez(handle, smiles=smiles, coordinates=coords, rdkit=rdBase.rdkitVersion)
        return coords
