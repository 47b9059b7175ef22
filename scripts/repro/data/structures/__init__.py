"""Protein chains in one canonical layout (data/structures/chains.parquet), and the API papers read it with.

One row per chain: ``chain_id``, ``source_file``, ``licence``, ``sequence`` (one-letter), ``n_residues``,
``backbone`` (flattened float32 N/CA/C coordinates in Angstrom, ``L*3*3``), ``dssp`` (three-class H/E/C
per residue) and ``split`` (train/val/test). Producers (``repro.data.structures.build``) write it from
the embedded package files or a user's PDB/mmCIF, AFDB or CATH folder; papers call :func:`read_chains`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from repro.workflow.io import InputError

COLUMNS = ("chain_id", "source_file", "licence", "sequence", "n_residues", "backbone", "dssp", "split")
SPLITS = ("train", "val", "test")
DSSP_CLASSES = "HEC"


@dataclass
class Chain:
    """One protein chain (or one model of an NMR ensemble) with its backbone and secondary structure."""

    chain_id: str
    sequence: str
    backbone: np.ndarray  # (L,3,3) float32 Å, N/CA/C
    dssp: str
    source: str
    licence: str
    split: str


def read_chains(path: str | os.PathLike) -> list[Chain]:
    """Every chain of a canonical ``chains.parquet``; a missing file, column or inconsistent row is named."""
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such chains table (run the structures data rule first)")
    try:
        table = pq.read_table(path)
    except Exception as err:  # pyarrow raises several unrelated types for a corrupt file
        raise InputError(path, f"not a readable parquet table ({err})") from err
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(path, f"missing columns {missing}")
    rows = table.select(list(COLUMNS)).to_pydict()
    chains = []
    for i, chain_id in enumerate(rows["chain_id"]):
        length = int(rows["n_residues"][i])
        backbone = np.asarray(rows["backbone"][i], dtype=np.float32)
        sequence, dssp, split = rows["sequence"][i], rows["dssp"][i], rows["split"][i]
        if backbone.size != length * 9 or len(sequence) != length or len(dssp) != length:
            raise InputError(
                path,
                f"chain {chain_id}: n_residues {length} disagrees with sequence ({len(sequence)}), "
                f"dssp ({len(dssp)}) or backbone ({backbone.size} values, want {length * 9})",
            )
        if split not in SPLITS or set(dssp) - set(DSSP_CLASSES):
            raise InputError(path, f"chain {chain_id}: split {split!r} or DSSP classes {sorted(set(dssp))} unknown")
        chains.append(
            Chain(
                chain_id=chain_id,
                sequence=sequence,
                backbone=backbone.reshape(length, 3, 3),
                dssp=dssp,
                source=rows["source_file"][i],
                licence=rows["licence"][i],
                split=split,
            )
        )
    return chains
