"""File names of the raw ATLAS layout and of the canonical processed layout.

Raw layout (what an ATLAS archive unpacks to, one folder per chain)::

    {root}/{name}/{name}.pdb
    {root}/{name}/{name}_prod_R{i}_fit.xtc    (older archives, assumed by MDGen/AlphaFlow)
    {root}/{name}/{name}_R{i}.xtc             (current archives)

Processed layout (what downstream rules read)::

    processed/{name}/{name}_R{i}_i{stride}.npy   atom14, float16, Angstrom [T, L, 14, 3]
    processed/{name}/{name}_R{i}_ca.npy          C-alpha, float32, Angstrom [T, L, 3]
"""

from __future__ import annotations

import re
from pathlib import Path

from repro.workflow.io import InputError

TRAJECTORY_SUFFIXES = (".xtc", ".dcd")
REPLICATE_FILE = re.compile(r"^(?P<name>.+?)(?:_prod)?_R(?P<rep>\d+)(?:_fit)?\.(?:xtc|dcd)$")


def topology_path(root: Path, name: str) -> Path:
    """The chain's topology (``{name}.pdb``); its element column decides which atoms are heavy."""
    return Path(root) / name / f"{name}.pdb"


def replicate_paths(root: Path, name: str) -> dict[int, Path]:
    """Replicate number -> trajectory file, accepting both ATLAS namings (and .dcd).

    Two files for one replicate (both namings present) is ambiguous and refused.
    """
    folder = Path(root) / name
    found: dict[int, Path] = {}
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        match = REPLICATE_FILE.match(path.name)
        if not match or match["name"] != name:
            continue
        rep = int(match["rep"])
        if rep in found:
            raise InputError(path, f"protein {name}: replicate R{rep} given twice ({found[rep].name} and {path.name})")
        found[rep] = path
    return found


def require_replicates(root: Path, name: str, replicates: list[int]) -> dict[int, Path]:
    """The trajectory of each wanted replicate; a missing one is an error naming protein and file."""
    found = replicate_paths(root, name)
    missing = [r for r in replicates if r not in found]
    if missing:
        expected = Path(root) / name / f"{name}_prod_R{missing[0]}_fit.xtc"
        raise InputError(
            expected,
            f"protein {name}: replicate R{missing[0]} missing (neither {name}_prod_R{missing[0]}_fit.xtc nor {name}_R{missing[0]}.xtc)",
        )
    return {r: found[r] for r in replicates}


def atom14_name(name: str, rep: int, stride: int) -> str:
    return f"{name}_R{rep}_i{stride}.npy"


def ca_name(name: str, rep: int) -> str:
    return f"{name}_R{rep}_ca.npy"
