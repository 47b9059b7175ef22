"""NMRShiftDB2 SD files with signals: reading the per-atom assignments, and writing the same layout.

A spectrum property looks like ``Spectrum 13C 0`` = ``17.6;0.0Q;10|18.3;0.0T;0|`` (shift; intensity
and multiplicity; atom index). The number after the nucleus is the spectrum's index within the record:
a record may hold ``Spectrum 13C 0``, ``Spectrum 1H 1``, ``Spectrum 13C 2``, and its ``Solvent`` field
then lists one solvent per spectrum index, one ``<i>:<name>`` line each (``0:Chloroform-D1 (CDCl3)``). Indices in ``nmrshiftdb2withsignals.sd`` are 0-based (``atom_index_base``
makes that a setting). ¹H assignments may point at the H atom or at its heavy-atom carrier; both
are accepted and resolved to the carrier, whose H atoms then get the shift.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rdkit import Chem, rdBase

from repro.data.spectra.molecules import Rejected
from repro.workflow.io import InputError

SPECTRUM_FIELD = re.compile(r"^Spectrum\s+(13C|1H)\s+(\d+)$")
SOLVENT_LINE = re.compile(r"^\s*(\d+)\s*:\s*(.*?)\s*$")


@dataclass
class SdfRecord:
    """One SD entry: the molecule (None when RDKit cannot read it) and its properties."""

    index: int
    mol: Chem.Mol | None
    props: dict[str, str]


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def check_sdf(path: str | os.PathLike) -> None:
    """Stop with a clear error when ``path`` is not an SD file (e.g. an HTML download page)."""
    path = Path(path)
    with _open(path) as handle:
        head = handle.read(65536)
    text = head.decode("utf-8", errors="replace")
    if text.lstrip().lower().startswith(("<!doctype", "<html")):
        raise InputError(path, "is an HTML page, not an SD file (download page instead of the data?)")
    if "M  END" not in text and "V2000" not in text and "V3000" not in text:
        raise InputError(path, "is not an SD file: no molfile block (M  END / V2000) in its first 64 kB")


def read_sdf(path: str | os.PathLike) -> Iterator[SdfRecord]:
    """Yield every entry with explicit H kept; unreadable molecules come back with ``mol=None``."""
    path = Path(path)
    check_sdf(path)
    with _open(path) as handle, rdBase.BlockLogs():
        for index, mol in enumerate(Chem.ForwardSDMolSupplier(handle, removeHs=False, sanitize=True)):
            props = mol.GetPropsAsDict() if mol is not None else {}
            yield SdfRecord(index, mol, {k: str(v) for k, v in props.items()})


def spectrum_fields(props: dict[str, str], nucleus: str) -> list[tuple[int, str]]:
    """Every ``Spectrum <nucleus> <i>`` field of a record as (spectrum index i, text), by index."""
    found = []
    for key, value in props.items():
        match = SPECTRUM_FIELD.match(key.strip())
        if match and match.group(1) == nucleus:
            found.append((int(match.group(2)), value))
    return sorted(found)


def spectrum_solvents(field: str) -> tuple[str, dict[int, str]]:
    """The ``Solvent`` field as (solvent of spectra it does not list, {spectrum index: solvent}).

    NMRShiftDB2 writes one ``<i>:<name>`` line per spectrum index; a field without indices (one name)
    is the solvent of every spectrum of the record.
    """
    by_index, plain = {}, []
    for line in str(field or "").splitlines():
        match = SOLVENT_LINE.match(line)
        if match:
            by_index[int(match.group(1))] = match.group(2)
        elif line.strip():
            plain.append(line.strip())
    return " ".join(plain), by_index


def parse_spectrum_field(field: str, atom_index_base: int = 0) -> list[tuple[float, int]]:
    """``shift;intensity+mult;atom|...`` -> [(shift, 0-based atom index)]; Rejected on malformed text.

    A signal with an empty shift field is a shift the depositor did not give: it comes back as NaN (the
    atom stays unassigned, a missing value, never a zero) and :func:`missing_shifts` counts it.
    """
    signals = []
    for item in field.replace("\n", "").split("|"):
        if not item.strip():
            continue
        parts = item.split(";")
        if len(parts) != 3:
            raise Rejected("unparsable_text", f"signal {item[:30]!r}")
        try:
            shift = float(parts[0]) if parts[0].strip() else float("nan")
            signals.append((shift, int(parts[2]) - atom_index_base))
        except ValueError as err:
            raise Rejected("unparsable_text", f"signal {item[:30]!r}") from err
    if not signals:
        raise Rejected("unparsable_text", "empty spectrum")
    return signals


def missing_shifts(signals: list[tuple[float, int]]) -> int:
    """How many signals of a parsed spectrum carry no shift (NaN)."""
    return sum(shift != shift for shift, _ in signals)


def assigned(signals: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """The signals that carry a shift."""
    return [(shift, idx) for shift, idx in signals if shift == shift]


def carbon_assignments(mol: Chem.Mol, signals: list[tuple[float, int]]) -> dict[int, float]:
    """{carbon index in ``mol``: shift}; an index that is not a carbon of the molecule is rejected."""
    out = {}
    for shift, idx in signals:
        if not 0 <= idx < mol.GetNumAtoms() or mol.GetAtomWithIdx(idx).GetSymbol() != "C":
            raise Rejected("bad_assignment", f"13C signal on atom {idx}, not a carbon")
        out[idx] = shift
    return out


def proton_assignments(mol: Chem.Mol, signals: list[tuple[float, int]]) -> dict[int, list[float]]:
    """{carrier heavy-atom index in ``mol``: sorted distinct shifts of its H}."""
    out: dict[int, set[float]] = {}
    for shift, idx in signals:
        if not 0 <= idx < mol.GetNumAtoms():
            raise Rejected("bad_assignment", f"1H signal on atom {idx} beyond {mol.GetNumAtoms()} atoms")
        atom = mol.GetAtomWithIdx(idx)
        carrier = atom.GetNeighbors()[0] if atom.GetSymbol() == "H" and atom.GetDegree() == 1 else atom
        if carrier.GetSymbol() == "H" or carrier.GetTotalNumHs(includeNeighbors=True) == 0:
            raise Rejected("bad_assignment", f"1H signal on atom {idx} that carries no hydrogen")
        out.setdefault(carrier.GetIdx(), set()).add(shift)
    return {k: sorted(v) for k, v in out.items()}


def format_spectrum_field(signals: list[tuple[float, str, int]], atom_index_base: int = 0, decimals: int = 2) -> str:
    """Write ``(shift, multiplicity letter, 0-based atom index)`` signals in NMRShiftDB2's layout."""
    return "".join(f"{shift:.{decimals}f};0.0{mult};{idx + atom_index_base}|" for shift, mult, idx in signals)


def write_sdf(path: str | os.PathLike, entries: list[tuple[Chem.Mol, dict[str, str]]]) -> None:
    """Write molecules (with explicit H) and their properties as an SD file at ``path``."""
    writer = Chem.SDWriter(str(path))
    writer.SetKekulize(True)
    for mol, props in entries:
        copy = Chem.Mol(mol)
        for key, value in props.items():
            copy.SetProp(key, value)
        writer.write(copy)
    writer.close()
