"""Read protein chains from PDB / mmCIF files (plain or gzipped) with mdtraj, in three folder layouts.

- ``folder``: any ``*.pdb``, ``*.ent``, ``*.cif``, ``*.mmcif`` (optionally ``.gz``) under a root, e.g. a
  user's own structures or the package test files; a file may hold several chains and several models
  (NMR ensembles: one chain record per model).
- ``afdb``: AlphaFold DB files ``AF-<accession>-F<n>-model_v<k>.(pdb|cif)[.gz]``; one chain each, named
  ``AF-<accession>-F<n>``.
- ``cath``: CATH domain files (``dompdb/<domain id>``, PDB text without an extension, e.g. ``1oaiA00``);
  one chain each, named by the domain id.

Per chain: standard amino acids (force-field and modified names such as MSE mapped through the ATLAS
source's aliases, :mod:`repro.data.atlas.atom14`) with N, CA and C present; a non-standard amino acid
with a complete backbone is kept as ``X``; water and ligands are left out. A residue missing a backbone
atom is dropped and the chain is cut there and at every chain break (C-N distance above
:data:`BREAK_ANGSTROM`); pieces shorter than ``min_residues`` are left out. Every file or piece left out
is logged with its reason and returned in ``skipped``; only a folder with nothing usable is an error.
"""

from __future__ import annotations

import gzip
import logging
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import mdtraj as md
import numpy as np

from repro.data.atlas.atom14 import standard_residue
from repro.workflow.io import InputError

log = logging.getLogger(__name__)

BACKBONE = ("N", "CA", "C")
NM_TO_ANGSTROM = 10.0
# A peptide C-N bond is 1.33 Å; anything above 2 Å is a gap in the chain (missing residues).
BREAK_ANGSTROM = 2.0
ONE_LETTER = {
    "ALA": "A", "ARG": "R", "ASN": "N", "ASP": "D", "CYS": "C", "GLN": "Q", "GLU": "E", "GLY": "G",
    "HIS": "H", "ILE": "I", "LEU": "L", "LYS": "K", "MET": "M", "PHE": "F", "PRO": "P", "SER": "S",
    "THR": "T", "TRP": "W", "TYR": "Y", "VAL": "V",
}  # fmt: skip
# Eight-state DSSP letters to the three classes (the same reduction as mdtraj's simplified DSSP).
DSSP_3 = {"H": "H", "G": "H", "I": "H", "E": "E", "B": "E"}
STRUCTURE_SUFFIX = re.compile(r"\.(pdb|ent|cif|mmcif)(\.gz)?$", re.IGNORECASE)
AFDB_NAME = re.compile(r"^(AF-[A-Za-z0-9]+-F\d+)-model_v\d+\.(pdb|cif)(\.gz)?$")
CATH_NAME = re.compile(r"^[0-9][a-zA-Z0-9]{3}[A-Za-z0-9]\d{2}$")
LAYOUTS = ("folder", "afdb", "cath")


@dataclass
class ChainRecord:
    """One chain as the canonical table stores it (before the split is assigned)."""

    chain_id: str
    source_file: str
    sequence: str
    backbone: np.ndarray  # (L, 3, 3) float32 Å
    dssp: str
    dssp_source: str  # "reference" (shipped assignment) or "mdtraj"


@dataclass
class ReadResult:
    chains: list[ChainRecord] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def skip(self, where: str, reason: str) -> None:
        log.warning("skipped %s: %s", where, reason)
        self.skipped.append({"item": where, "reason": reason})


def structure_files(root: str | Path, layout: str) -> list[Path]:
    """The structure files of ``root`` in ``layout``, sorted (a missing root or unknown layout is named)."""
    root = Path(root)
    if layout not in LAYOUTS:
        raise InputError(root, f"unknown layout {layout!r} (one of {', '.join(LAYOUTS)})")
    if not root.is_dir():
        raise InputError(root, "structure folder does not exist")
    files = sorted(p for p in root.rglob("*") if p.is_file())
    if layout == "folder":
        return [p for p in files if STRUCTURE_SUFFIX.search(p.name)]
    if layout == "afdb":
        return [p for p in files if AFDB_NAME.match(p.name)]
    return [p for p in files if CATH_NAME.match(p.name)]


def _stem(path: Path) -> str:
    return STRUCTURE_SUFFIX.sub("", path.name)


def _load(path: Path, layout: str) -> md.Trajectory:
    """mdtraj load of a PDB/mmCIF file; gzipped and extension-less (CATH) files go through a temporary copy."""
    name = path.name
    if layout == "cath" or name.lower().endswith(".gz"):
        inner = name[:-3] if name.lower().endswith(".gz") else name + ".pdb"
        with tempfile.TemporaryDirectory() as tmp:
            plain = Path(tmp) / inner
            opener = gzip.open if name.lower().endswith(".gz") else open
            with opener(path, "rb") as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst)
            return md.load(str(plain))
    return md.load(str(path))


def reference_dssp(path: Path) -> str | None:
    """The shipped DSSP assignment beside a structure (``X.pdb.gz`` -> ``X.pdb.dssp``), reduced to H/E/C."""
    name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    ref = path.with_name(name + ".dssp")
    if not ref.is_file():
        return None
    fields = ref.read_text().split()
    if not fields:
        raise InputError(ref, "empty DSSP reference")
    return "".join(DSSP_3.get(c, "C") for c in fields[0])


def _residue_code(residue: md.core.topology.Residue) -> str | None:
    """One-letter code of an amino acid with a complete backbone ('X' when non-standard), else None."""
    names = {a.name for a in residue.atoms}
    if not set(BACKBONE) <= names:
        return None
    standard = standard_residue(residue.name)
    return ONE_LETTER[standard] if standard else "X"


def _segments(ca_c_n: np.ndarray, keep: np.ndarray) -> list[np.ndarray]:
    """Runs of kept residues without a chain break; ``ca_c_n`` holds the C(i)-N(i+1) distances in Å."""
    runs, current = [], []
    for i in range(len(keep)):
        if not keep[i]:
            if current:
                runs.append(current)
            current = []
            continue
        if current and (current[-1] != i - 1 or ca_c_n[current[-1]] > BREAK_ANGSTROM):
            runs.append(current)
            current = []
        current.append(i)
    if current:
        runs.append(current)
    return [np.asarray(r) for r in runs]


def _mdtraj_dssp(traj: md.Trajectory, atom_indices: list[int]) -> np.ndarray:
    """mdtraj's simplified DSSP per residue of the atom subset and per model ('NA' -> 'C')."""
    codes = md.compute_dssp(traj.atom_slice(atom_indices), simplified=True)
    return np.where(np.isin(codes, ["H", "E"]), codes, "C")


def read_structure(
    path: str | Path,
    layout: str = "folder",
    min_residues: int = 30,
    max_models: int = 20,
    result: ReadResult | None = None,
) -> ReadResult:
    """Chains of one file; unreadable files and unusable pieces are recorded in ``result.skipped``."""
    path = Path(path)
    result = result if result is not None else ReadResult()
    try:
        traj = _load(path, layout)
    except Exception as err:  # mdtraj raises many types (ValueError, KeyError, IndexError) on bad text
        result.skip(str(path), f"unreadable structure file ({type(err).__name__}: {err})")
        return result
    if traj.n_frames == 0 or traj.n_atoms == 0:
        result.skip(str(path), "no atoms")
        return result
    n_models = min(traj.n_frames, max_models)
    reference = reference_dssp(path)
    stem = _stem(path)
    if layout == "afdb":
        stem = AFDB_NAME.match(path.name).group(1)
    protein_chains = []
    for chain in traj.topology.chains:
        residues = list(chain.residues)
        codes = [_residue_code(r) for r in residues]
        if not any(codes):
            continue
        dropped = [
            f"{r.name}{r.resSeq}" for r, c in zip(residues, codes) if c is None and standard_residue(r.name) is not None
        ]
        if dropped:
            result.skip(f"{path}:{chain.chain_id}", f"residues missing backbone atoms dropped: {' '.join(dropped)}")
        nonstandard = sorted({r.name for r, c in zip(residues, codes) if c == "X"})
        if nonstandard:
            log.info(
                "%s chain %s: non-standard residues with a backbone read as X: %s", path, chain.chain_id, nonstandard
            )
        protein_chains.append((chain, residues, codes))
    if not protein_chains:
        result.skip(str(path), "no amino-acid residues with N, CA and C")
        return result
    single = len(protein_chains) == 1 and n_models == 1
    for chain, residues, codes in protein_chains:
        keep = np.array([c is not None for c in codes])
        kept = [r for r, k in zip(residues, keep) if k]
        index = np.array([[next(a.index for a in r.atoms if a.name == n) for n in BACKBONE] for r in kept])
        xyz = traj.xyz[:n_models][:, index.reshape(-1)].reshape(n_models, len(kept), 3, 3) * NM_TO_ANGSTROM
        position = np.cumsum(keep) - 1
        gap = np.full(len(residues), np.inf)
        peptide = np.linalg.norm(xyz[0, 1:, 0] - xyz[0, :-1, 2], axis=-1)
        gap[np.flatnonzero(keep)[:-1]] = peptide
        runs = _segments(gap, keep)
        if reference is not None and single and len(reference) == len(residues) and keep.all():
            dssp, dssp_source = np.array([list(reference)]), "reference"
        else:
            if reference is not None:
                log.warning("%s: DSSP reference does not match the chain (length or models); using mdtraj", path)
            try:
                dssp = _mdtraj_dssp(traj[:n_models], [a.index for r in kept for a in r.atoms])
                dssp_source = "mdtraj"
            except Exception as err:  # mdtraj's DSSP fails on odd atom sets; the chain is still named
                result.skip(f"{path}:{chain.chain_id}", f"mdtraj DSSP failed ({type(err).__name__}: {err})")
                continue
        chain_name = chain.chain_id or str(chain.index)
        for model in range(n_models):
            for k, run in enumerate(runs):
                where = f"{path}:{chain_name}" + (f" model {model}" if n_models > 1 else "")
                if len(run) < min_residues:
                    result.skip(
                        f"{where} residues {residues[run[0]].resSeq}-{residues[run[-1]].resSeq}",
                        f"piece of {len(run)} residues is shorter than min_residues {min_residues}",
                    )
                    continue
                chain_id = stem if single else f"{stem}_{chain_name}"
                if n_models > 1:
                    chain_id += f"_m{model + 1}"
                if len(runs) > 1:
                    chain_id += f"_s{k + 1}"
                rows = position[run]
                result.chains.append(
                    ChainRecord(
                        chain_id=chain_id,
                        source_file=path.name,
                        sequence="".join(codes[i] for i in run),
                        backbone=np.ascontiguousarray(xyz[model, rows], dtype=np.float32),
                        dssp="".join(dssp[model if dssp.shape[0] > 1 else 0, rows]),
                        dssp_source=dssp_source,
                    )
                )
    return result


def read_folder(
    root: str | Path, layout: str = "folder", min_residues: int = 30, max_models: int = 20, limit: int | None = None
) -> ReadResult:
    """Chains of every structure file under ``root``; InputError when none is usable (reasons listed)."""
    files = structure_files(root, layout)
    if limit is not None:
        files = files[:limit]
    if not files:
        raise InputError(root, f"no structure files in the {layout!r} layout")
    result = ReadResult()
    for path in files:
        read_structure(path, layout, min_residues, max_models, result)
    if not result.chains:
        reasons = "; ".join(f"{s['item']}: {s['reason']}" for s in result.skipped[:5])
        raise InputError(root, f"no usable chains in {len(files)} files ({reasons})")
    ids = [c.chain_id for c in result.chains]
    if len(set(ids)) != len(ids):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        raise InputError(root, f"chain ids occur in more than one file: {duplicates[:5]}")
    return result
