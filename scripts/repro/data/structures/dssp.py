"""Three-class DSSP of backbone-only models (decoded or generated structures), with mdtraj."""

from __future__ import annotations

import mdtraj as md
import numpy as np

from repro.metrics.protein_geometry import add_oxygens


def dssp_of_backbone(backbone: np.ndarray) -> str:
    """mdtraj's three-class DSSP (H/E/C) of an N/CA/C backbone in Å; the carbonyl oxygens DSSP needs are placed
    by :func:`repro.metrics.protein_geometry.add_oxygens`."""
    atoms = add_oxygens(backbone)
    top = md.Topology()
    chain = top.add_chain()
    for _ in range(len(atoms)):
        residue = top.add_residue("GLY", chain)
        for name in ("N", "CA", "C", "O"):
            top.add_atom(name, md.element.get_by_symbol(name[0]), residue)
    traj = md.Trajectory(atoms.reshape(1, -1, 3) / 10.0, top)
    codes = md.compute_dssp(traj, simplified=True)[0]
    return "".join(c if c in ("H", "E") else "C" for c in codes)
