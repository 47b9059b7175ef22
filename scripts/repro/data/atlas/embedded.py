"""Real protein MD shipped in MDAnalysisTests, arranged in the raw ATLAS layout.

- ``adk``: adenylate kinase (214 residues) with the CHARMM topology ``adk.psf`` (it has
  elements, unlike ``adk_closed.pdb``) and three trajectories as three replicates:
  ``adk_dims.dcd`` (R1, 98 frames), ``adk_dims2.dcd`` (R2, 102 frames) and the NAMD
  implicit-solvent run ``adk_gbis_tmd-fast1_NAMD.dcd`` (R3, 100 frames; its topology
  orders some atoms differently, so its atoms are reordered by residue and name).
- ``adkopls``: the GROMACS OPLS-AA AdK run ``adk_oplsaa.xtc`` (10 frames), stripped of solvent
  and made whole across periodic boundaries.
- ``cobrotoxin``: ``cobrotoxin.xtc`` (62 residues, 3 frames), likewise.

These are transition paths and very short runs, not 100 ns equilibrium MD (see the
paper's README section); the files go through the same preprocessing as ATLAS archives.
"""

from __future__ import annotations

import os
from pathlib import Path

import mdtraj as md
import numpy as np

from repro.workflow.io import atomic_path

LICENCE = "MDAnalysisTests data files, LGPLv3+ (https://github.com/MDAnalysis/mdanalysis)"


def _data_dir() -> Path:
    import MDAnalysisTests.datafiles as datafiles

    return Path(os.path.dirname(datafiles.PSF))


def _reorder_like(reference: md.Topology, other: md.Topology) -> np.ndarray:
    """Permutation taking ``other``'s atom order to ``reference``'s, matching residue index and name.

    Atoms without a same-named partner in the residue (e.g. HD1 vs HE2 of a histidine
    protonated differently) are paired in order.
    """
    order = np.empty(reference.n_atoms, dtype=np.int64)
    for res_ref, res_other in zip(reference.residues, other.residues, strict=True):
        by_name = {a.name: a.index for a in res_other.atoms}
        unmatched = [a.index for a in res_other.atoms if a.name not in {b.name for b in res_ref.atoms}]
        for atom in res_ref.atoms:
            order[atom.index] = by_name[atom.name] if atom.name in by_name else unmatched.pop(0)
    return order


def _write_entry(root: Path, name: str, topology: md.Trajectory, replicates: list[md.Trajectory]) -> None:
    with atomic_path(Path(root) / name) as tmp:
        tmp.mkdir()
        topology.save_pdb(str(tmp / f"{name}.pdb"))
        for rep, traj in enumerate(replicates, start=1):
            traj.save_xtc(str(tmp / f"{name}_prod_R{rep}_fit.xtc"))


def _protein_only(traj: md.Trajectory) -> md.Trajectory:
    """Protein atoms of a solvated GROMACS run, made whole across periodic boundaries.

    The raw xtc files are not PBC-corrected (AdK OPLS-AA has C-alpha neighbours 80 Å apart);
    ATLAS archives are, so the embedded entries are too.
    """
    protein = traj.atom_slice(traj.topology.select("protein"))
    return protein.image_molecules(anchor_molecules=[set(protein.topology.atoms)], make_whole=True)


def build_embedded(root: Path) -> dict[str, list[int]]:
    """Write the raw layout under ``root``; return ``{name: replicates}``."""
    data = _data_dir()
    psf = md.load_psf(str(data / "adk.psf"))
    runs = [md.load(str(data / f), top=psf) for f in ("adk_dims.dcd", "adk_dims2.dcd")]
    namd_top = md.load_psf(str(data / "adk_closed_NAMD.psf"))
    namd = md.load(str(data / "adk_gbis_tmd-fast1_NAMD.dcd"), top=namd_top)
    order = _reorder_like(psf, namd_top)
    runs.append(md.Trajectory(namd.xyz[:, order], psf))
    _write_entry(root, "adk", runs[0][0], runs)

    opls = _protein_only(md.load(str(data / "adk_oplsaa.xtc"), top=str(data / "adk_oplsaa.pdb")))
    _write_entry(root, "adkopls", opls[0], [opls])
    cobro = _protein_only(md.load(str(data / "cobrotoxin.xtc"), top=str(data / "cobrotoxin.pdb")))
    _write_entry(root, "cobrotoxin", cobro[0], [cobro])
    return {"adk": [1, 2, 3], "adkopls": [1], "cobrotoxin": [1]}


EMBEDDED_SPLITS = {"train": ["adk"], "val": [], "test": ["adkopls", "cobrotoxin"]}


def main(job) -> None:
    """Rule entry ``atlas_embedded``: the raw layout plus ``entries.json`` (replicates, splits, licence)."""
    import MDAnalysisTests

    from repro.workflow.io import write_json

    with atomic_path(job.output.raw) as tmp:
        tmp.mkdir()
        replicates = build_embedded(tmp)
    write_json(
        job.output.entries,
        {
            "replicates": replicates,
            "splits": EMBEDDED_SPLITS,
            "dt_ps": job.params.section["embedded"]["dt_ps"],
            "licence": LICENCE,
            "origin": f"MDAnalysisTests {MDAnalysisTests.__version__}",
        },
    )
