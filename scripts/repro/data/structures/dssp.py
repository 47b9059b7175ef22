"""Three-class DSSP of backbone-only models (decoded or generated structures), with mdtraj."""

from __future__ import annotations

import mdtraj as md
import numpy as np

from repro.metrics.protein_geometry import add_oxygens


def _topology(residues: int) -> md.Topology:
    top = md.Topology()
    chain = top.add_chain()
    for _ in range(residues):
        residue = top.add_residue("GLY", chain)
        for name in ("N", "CA", "C", "O"):
            top.add_atom(name, md.element.get_by_symbol(name[0]), residue)
    return top


def dssp_of_backbones(backbones: np.ndarray) -> np.ndarray:
    """mdtraj's three-class DSSP, ``(n, L)`` array of 'H'/'E'/'C', of ``n`` N/CA/C backbones ``(n, L, 3, 3)`` in Å,
    run as the frames of one trajectory; the carbonyl oxygens DSSP needs are placed by
    :func:`repro.metrics.protein_geometry.add_oxygens`."""
    atoms = add_oxygens(backbones)
    n, length = atoms.shape[:2]
    traj = md.Trajectory(atoms.reshape(n, -1, 3) / 10.0, _topology(length))
    codes = md.compute_dssp(traj, simplified=True)
    return np.where(np.isin(codes, ("H", "E")), codes, "C")


def dssp_of_backbone(backbone: np.ndarray) -> str:
    """mdtraj's three-class DSSP (H/E/C) of one N/CA/C backbone ``(L, 3, 3)`` in Å."""
    return "".join(dssp_of_backbones(np.asarray(backbone)[None])[0])
