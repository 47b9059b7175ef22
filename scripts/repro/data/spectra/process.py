"""Stage ``spectra_data``: raw files -> canonical parquet records, with every rejection counted.

Canonical record (one row per molecule and nucleus; ``labelled.parquet`` from NMRShiftDB2,
``unlabelled.parquet`` from NMRexp): mol_id, smiles (canonical), nucleus, solvent, solvent_group,
fold, atoms (atomic numbers, canonical order, explicit H), coordinates (float32, N*3 flattened, Å),
target_mask (atoms the spectrum covers), target (assigned shift, NaN where unassigned or unknown),
observed (the spectrum's sorted multiset), env_codes (atom environment ids, N*4 flattened, for the
HOSE-like baseline). One bad record is counted with its reason and skipped;
a file that is not what it claims stops the run (:class:`repro.workflow.io.InputError`).
"""

from __future__ import annotations

import collections
import logging
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from rdkit import rdBase

from repro.data.spectra.literature import NUCLEUS_OF_TYPE, RANGES, parse_text
from repro.data.spectra.molecules import (
    ConformerCache,
    Rejected,
    canonical_with_hydrogens,
    check_molecule,
    environment_codes,
    filtered_molecule,
    symmetry_classes,
)
from repro.data.spectra.sdf import (
    assigned,
    carbon_assignments,
    missing_shifts,
    parse_spectrum_field,
    proton_assignments,
    read_sdf,
    spectrum_fields,
    spectrum_solvents,
)
from repro.data.spectra.solvents import solvent_group
from repro.workflow.entry import Job
from repro.workflow.io import InputError, atomic_path, read_json, sha256, write_json
from repro.workflow.manifest import file_record, relative_path, write_manifest

log = logging.getLogger(__name__)
LITERATURE_COLUMNS = ["smiles", "nmr_type", "nmr_shift", "nmr_solvent", "filename"]
NUCLEI = ("1H", "13C")
ELEMENT = {"1H": 1, "13C": 6}


# Outcomes that select rather than refuse: a row of another nucleus, a repeat, a compound of the labelled
# benchmark. They are counted like the others but do not count against ``max_refused_fraction``.
SELECTIONS = ("other_nucleus", "duplicate", "in_labelled_set")
SHOWN = 10
# Guards against a wrong file or layout (a parser refusing nearly everything), not quality filters: NMRexp's
# text-mined rows fail the count and range checks far more often than NMRShiftDB2's curated records.
DEFAULT_MAX_REFUSED = {"labelled": 0.2, "unlabelled": 0.8}


class RejectionLog:
    """Counts of rejected records per (source, nucleus, reason), with a few examples each, the first ten
    refused ids per source, and the shifts a spectrum left missing (counted, never read as values)."""

    def __init__(self, examples: int = 3):
        self.counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.examples: dict[str, list[str]] = collections.defaultdict(list)
        self.kept: collections.Counter = collections.Counter()
        self.first: dict[str, list[str]] = collections.defaultdict(list)
        self.missing_shifts: collections.Counter = collections.Counter()
        self.max_examples = examples

    def reject(self, source: str, nucleus: str, where: str, err: Rejected) -> None:
        key = f"{source}/{nucleus}"
        self.counts[key][err.reason] += 1
        if len(self.examples[f"{key}/{err.reason}"]) < self.max_examples:
            self.examples[f"{key}/{err.reason}"].append(f"{where}: {err.detail}")
        if err.reason not in SELECTIONS and len(self.first[source]) < SHOWN:
            self.first[source].append(f"{where} ({err.reason})")

    def keep(self, source: str, nucleus: str) -> None:
        self.kept[f"{source}/{nucleus}"] += 1

    def refused(self, source: str) -> int:
        """Records of ``source`` refused for a defect (selections apart)."""
        return sum(
            n
            for key, c in self.counts.items()
            if key.startswith(f"{source}/")
            for r, n in c.items()
            if r not in SELECTIONS
        )

    def read(self, source: str) -> int:
        """Records of ``source`` kept or refused for a defect."""
        return self.refused(source) + sum(n for key, n in self.kept.items() if key.startswith(f"{source}/"))

    def check(self, limits: dict[str, float], files: dict[str, str]) -> None:
        """Log the refusals of each source (count and first ten ids); stop above its allowed fraction."""
        for source, limit in limits.items():
            read, refused = self.read(source), self.refused(source)
            if not refused:
                continue
            text = f"{refused} of {read} {source} records refused; first: {self.first[source]}"
            if refused / max(read, 1) > limit:
                raise InputError(files.get(source, source), f"{text}; more than the allowed fraction {limit:g}")
            log.warning(text)

    def report(self) -> dict[str, Any]:
        return {
            "kept": dict(self.kept),
            "rejected": {k: dict(v) for k, v in self.counts.items()},
            "rejected_total": {k: sum(v.values()) for k, v in self.counts.items()},
            "refused": {
                s: {"read": self.read(s), "refused": self.refused(s), "first_refused": self.first[s]}
                for s in ("labelled", "unlabelled")
            },  # fmt: skip
            "missing_shifts": dict(self.missing_shifts),
            "examples": dict(self.examples),
        }


def _geometry(mol, cache: ConformerCache):
    smiles, canon, source_index = canonical_with_hydrogens(mol)
    coords = cache.coordinates(smiles, canon)
    atoms = np.array([a.GetAtomicNum() for a in canon.GetAtoms()], np.int8)
    return smiles, canon, source_index, coords, atoms


def _row(mol_id, smiles, nucleus, solvent, atoms, coords, mask, target, observed, canon) -> dict[str, Any]:
    return {
        "mol_id": mol_id,
        "smiles": smiles,
        "nucleus": nucleus,
        "solvent": solvent,
        "solvent_group": solvent_group(solvent),
        "n_atoms": int(atoms.size),
        "atoms": atoms,
        "coordinates": coords.reshape(-1).astype(np.float32),
        "target_mask": mask,
        "target": target.astype(np.float32),
        "observed": np.sort(observed).astype(np.float32),
        "env_codes": environment_codes(canon).reshape(-1),
    }


def spectrum_target(
    rec, canon, source_index, n_atoms: int, nucleus: str, field: str, settings, log_: RejectionLog | None = None
) -> np.ndarray:
    """Per-atom shifts (canonical order, NaN where unassigned) of one spectrum field; Rejected when malformed.

    A signal without a shift leaves its atom unassigned (missing, not zero), counted in ``log_``."""
    low, high = RANGES[nucleus]
    signals = parse_spectrum_field(field, settings["atom_index_base"])
    if log_ is not None:
        log_.missing_shifts[nucleus] += missing_shifts(signals)
    signals = assigned(signals)
    if not signals:
        raise Rejected("unparsable_text", "no signal carries a shift")
    canon_of = {src: i for i, src in enumerate(source_index)}
    target = np.full(n_atoms, np.nan)
    if nucleus == "13C":
        for idx, shift in carbon_assignments(rec.mol, signals).items():
            target[canon_of[idx]] = shift
    else:
        for carrier, shifts in proton_assignments(rec.mol, signals).items():
            hs = [n.GetIdx() for n in canon.GetAtomWithIdx(canon_of[carrier]).GetNeighbors() if n.GetAtomicNum() == 1]
            if len(shifts) not in (1, len(hs)):
                raise Rejected("bad_assignment", f"{len(shifts)} distinct shifts for {len(hs)} H on atom {carrier}")
            target[hs] = shifts if len(shifts) == len(hs) else shifts[0]
    mask = np.isfinite(target)
    if np.any((target[mask] <= low) | (target[mask] >= high)):
        raise Rejected("out_of_range", f"shift outside ({low:g}, {high:g}) ppm")
    return target


def combine_spectra(targets: list[np.ndarray]) -> np.ndarray:
    """Per-atom median over the spectra of one solvent that assign the atom (NaN where none does)."""
    stack = np.stack(targets)
    covered = np.isfinite(stack).any(axis=0)
    out = np.full(stack.shape[1], np.nan)
    out[covered] = np.nanmedian(stack[:, covered], axis=0)
    return out


def labelled_rows(
    path: Path, nucleus: str, settings: dict[str, Any], cache: ConformerCache, log_: RejectionLog
) -> Iterator[dict[str, Any]]:
    """Per-atom assigned records of one nucleus from an NMRShiftDB2 SD file.

    Every ``Spectrum <nucleus> <i>`` field counts, with its own solvent (line ``<i>:`` of ``Solvent``); a
    malformed spectrum is rejected with its reason and the record's other spectra are kept. Several spectra
    in one solvent become one record (per-atom median); each solvent gets its own record, whose ``mol_id``
    carries ``@<solvent>`` when the molecule was measured in more than one.
    """
    for rec in read_sdf(path):
        where = f"{path.name}#{rec.index}"
        fields = spectrum_fields(rec.props, nucleus)
        if rec.mol is None:
            log_.reject("labelled", nucleus, where, Rejected("bad_molecule", "RDKit cannot read the molfile"))
            continue
        if not fields:
            continue
        try:
            check_molecule(rec.mol)
            smiles, canon, source_index, coords, atoms = _geometry(rec.mol, cache)
        except Rejected as err:
            log_.reject("labelled", nucleus, where, err)
            continue
        default, solvents = spectrum_solvents(rec.props.get("Solvent", ""))
        by_solvent: dict[str, list[np.ndarray]] = {}
        for index, field in fields:
            try:
                target = spectrum_target(rec, canon, source_index, atoms.size, nucleus, field, settings, log_)
            except Rejected as err:
                log_.reject("labelled", nucleus, f"{where} spectrum {index}", err)
                continue
            by_solvent.setdefault(solvents.get(index, default), []).append(target)
        mol_id = rec.props.get("nmrshiftdb2 ID", f"sdf-{rec.index}")
        for solvent, targets in by_solvent.items():
            target = combine_spectra(targets)
            mask = np.isfinite(target)
            log_.keep("labelled", nucleus)
            row_id = mol_id if len(by_solvent) == 1 else f"{mol_id}@{solvent}"
            yield _row(row_id, smiles, nucleus, solvent, atoms, coords, mask, target, target[mask], canon)


def literature_batches(path: Path, batch_rows: int = 50_000) -> Iterator[pd.DataFrame]:
    """The needed NMRexp columns in batches (parquet by column selection, CSV in chunks)."""
    if path.suffix == ".parquet":
        for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows, columns=LITERATURE_COLUMNS):
            yield batch.to_pandas()
    else:
        yield from pd.read_csv(path, usecols=LITERATURE_COLUMNS, chunksize=batch_rows, dtype=str)


def literature_row(row: dict[str, Any], where: str, settings: dict[str, Any], cache: ConformerCache) -> dict[str, Any]:
    """One unassigned record from an NMRexp row; raises :class:`Rejected` with the failing check."""
    nucleus = NUCLEUS_OF_TYPE[row["nmr_type"]]
    observed = parse_text(row["nmr_shift"], nucleus, settings["h_gap"])
    mol = filtered_molecule(row["smiles"])
    smiles, canon, _, coords, atoms = _geometry(mol, cache)
    mask = atoms == ELEMENT[nucleus]
    if nucleus == "13C":
        classes = symmetry_classes(canon)
        rng = np.random.default_rng([settings["representative_seed"], zlib.crc32(smiles.encode())])
        chosen = np.zeros_like(mask)
        for cls in np.unique(classes[mask]):
            members = np.flatnonzero(mask & (classes == cls))
            chosen[rng.choice(members)] = True
        mask = chosen
    if observed.size != mask.sum():
        raise Rejected(
            "count_mismatch",
            f"{observed.size} values for {int(mask.sum())} {'H atoms' if nucleus == '1H' else 'carbon classes'}",
        )
    return _row(
        row.get("filename") or where,
        smiles,
        nucleus,
        row["nmr_solvent"],
        atoms,
        coords,
        mask,
        np.full(atoms.size, np.nan),
        observed,
        canon,
    )


def unlabelled_rows(
    path: Path, settings: dict[str, Any], cache: ConformerCache, log_: RejectionLog, outcomes: list[str]
) -> Iterator[dict[str, Any]]:
    """Records from an NMRexp table; ``outcomes`` gets 'kept' or the rejection reason of every row."""
    index = 0
    for frame in literature_batches(path):
        for row in frame.to_dict("records"):
            where = f"{path.name}#{index}"
            index += 1
            nucleus = NUCLEUS_OF_TYPE.get(row.get("nmr_type"))
            if nucleus is None or nucleus not in settings["nuclei"]:
                log_.reject("unlabelled", "other", where, Rejected("other_nucleus", str(row.get("nmr_type"))))
                outcomes.append("other_nucleus")
                continue
            try:
                record = literature_row(row, where, settings, cache)
            except Rejected as err:
                log_.reject("unlabelled", nucleus, where, err)
                outcomes.append(err.reason)
                continue
            outcomes.append("kept")
            log_.keep("unlabelled", nucleus)
            yield record


def assign_folds(frame: pd.DataFrame, n_folds: int, seed: int) -> pd.DataFrame:
    """k-fold split by molecule (canonical SMILES), so a compound's 1H and 13C records share a fold."""
    unique = np.array(sorted(frame["smiles"].unique()))
    order = np.random.default_rng(seed).permutation(unique.size)
    fold = {s: int(rank % n_folds) for rank, s in zip(range(unique.size), unique[order])}
    return frame.assign(fold=frame["smiles"].map(fold).astype(np.int64))


def _deduplicate(
    rows: list[dict[str, Any]], exclude: set[str], log_: RejectionLog, outcomes: list[str], positions: list[int]
) -> list[dict[str, Any]]:
    """Drop repeated (SMILES, nucleus) pairs and compounds of the labelled benchmark (no overlap)."""
    seen, kept = set(), []
    for row, pos in zip(rows, positions):
        key = (row["smiles"], row["nucleus"])
        reason = "in_labelled_set" if row["smiles"] in exclude else "duplicate" if key in seen else None
        if reason:
            log_.reject("unlabelled", row["nucleus"], row["mol_id"], Rejected(reason))
            log_.kept[f"unlabelled/{row['nucleus']}"] -= 1
            outcomes[pos] = reason
            continue
        seen.add(key)
        kept.append(row)
    return kept


def _write_parquet(path: str, rows: list[dict[str, Any]], n_folds: int, seed: int) -> int:
    if not rows:
        raise InputError(path, "no record passed the filters; see the rejection report")
    frame = assign_folds(pd.DataFrame(rows), n_folds, seed)
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)
    return len(frame)


def synthetic_check(truth_file: str, outcomes: list[str]) -> dict[str, Any]:
    """Compare the filters' outcome of every synthetic row with the generator's record of what it broke."""
    truth = read_json(truth_file)["rows"]
    table = collections.Counter()
    for item in truth:
        outcome = outcomes[item["row"]]
        if item["kind"] == "clean":
            table["clean_kept" if outcome == "kept" else "clean_rejected"] += 1
        else:
            table["malformed_rejected" if outcome != "kept" else "malformed_kept"] += 1
            table["malformed_reason_matches"] += outcome == item["kind"]
    return dict(table)


def main(job: Job) -> None:
    raw = read_json(job.input.raw)
    settings = job.params.settings
    for entry in raw["files"]:
        if sha256(entry["path"]) != entry["sha256"]:
            raise InputError(
                entry["path"], "changed since it was listed in raw.json (sha256 differs); rerun spectra_raw"
            )
    cache = ConformerCache(job.params.conformer_dir)
    rejections = RejectionLog()
    labelled: list[dict[str, Any]] = []
    for entry in (e for e in raw["files"] if e["role"] == "labelled_sdf"):
        for nucleus in settings["nuclei"]:
            labelled += labelled_rows(Path(entry["path"]), nucleus, settings, cache, rejections)
    unlabelled, outcomes, positions = [], [], []
    for entry in (e for e in raw["files"] if e["role"] == "literature"):
        for row in unlabelled_rows(Path(entry["path"]), settings, cache, rejections, outcomes):
            positions.append(len(outcomes) - 1)
            unlabelled.append(row)
    unlabelled = _deduplicate(unlabelled, {r["smiles"] for r in labelled}, rejections, outcomes, positions)
    roles = {"labelled": "labelled_sdf", "unlabelled": "literature"}
    rejections.check(
        settings.get("max_refused_fraction", DEFAULT_MAX_REFUSED),
        {s: ", ".join(e["path"] for e in raw["files"] if e["role"] == r) for s, r in roles.items()},
    )
    counts = {
        "labelled": _write_parquet(job.output.labelled, labelled, settings["folds"], settings["cv_seed"]),
        "unlabelled": _write_parquet(job.output.unlabelled, unlabelled, settings["folds"], settings["cv_seed"]),
    }
    report = rejections.report()
    report["conformer_cache"] = {"hits": cache.hits, "misses": cache.misses, "dir": str(cache.root)}
    if raw.get("synthetic"):
        report["synthetic_check"] = synthetic_check(raw["truth"], outcomes)
    write_json(job.output.rejections, report)
    log.info("records: %s; rejected: %s", counts, report["rejected_total"])
    root = Path(job.output.manifest).parent
    write_manifest(
        job.output.manifest,
        source=raw["source"],
        producer="repro.data.spectra.process",
        files=[
            {
                "path": relative_path(e["path"], root),
                "bytes": e["bytes"],
                "sha256": e["sha256"],
                "url": e.get("url"),
                "role": e["role"],
            }
            for e in raw["files"]
        ]
        + [file_record(job.output.labelled, root), file_record(job.output.unlabelled, root)],
        licence="; ".join(dict.fromkeys(e.get("licence", "unknown") for e in raw["files"])) or "unknown",
        settings=settings,
        packages=["rdkit"],
        details={
            "synthetic": bool(raw.get("synthetic")),
            "records": counts,
            "refused": report["refused"],
            "missing_shifts": report["missing_shifts"],
            "rdkit": rdBase.rdkitVersion,
        },
    )
