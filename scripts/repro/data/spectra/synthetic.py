"""SYNTHETIC default: real small molecules, made-up shifts, written in the real files' formats.

The labelled part is an NMRShiftDB2-style SD file (``Spectrum 13C 0``, ``Spectrum 1H 0``, ``Solvent``)
and the unassigned part an NMRexp-style parquet table with ACS-style text, so the real parsers
and filters run on it. A fraction of literature rows is deliberately malformed (each kind the
filters must catch); which rows and how is written to a sidecar truth file for tests and reports.
Shifts come from :mod:`.teacher` and are NOT experimental.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rdkit import Chem

from repro.data.spectra.literature import multiplicity, render_carbon_text, render_proton_text
from repro.data.spectra.molecules import symmetry_classes
from repro.data.spectra.nmrexp_layout import COLUMNS as NMREXP_COLUMNS
from repro.data.spectra.sdf import format_spectrum_field, write_sdf
from repro.data.spectra.teacher import SOLVENT_GROUPS, noisy_shifts
from repro.workflow.io import atomic_path, write_json

SDF_SOLVENT_NAMES = {
    "CDCl3": "0:Chloroform-D1 (CDCl3)",
    "DMSO-d6": "0:Dimethylsulphoxide-D6 (DMSO-D6)",
    "other": "0:Methanol-D4 (CD3OD)",
}
TEXT_SOLVENT_NAMES = {"CDCl3": "CDCl3", "DMSO-d6": "DMSO-d6", "other": "CD3OD"}
MALFORMED_KINDS = ("not_monotone", "count_mismatch", "out_of_range", "broad_range", "unparsable_text", "bad_smiles")


def read_molecule_list(path: str | os.PathLike) -> list[str]:
    """SMILES lines of the shipped molecule list (comments start with '#')."""
    return [line.strip() for line in Path(path).read_text().splitlines() if line.strip() and not line.startswith("#")]


def _proton_peaks(mol_h: Chem.Mol, shifts: np.ndarray, classes: np.ndarray) -> list[tuple[float, int, str]]:
    """One peak per H symmetry class: (shift rounded to 0.01, nH, multiplicity from vicinal H)."""
    peaks = []
    for cls in sorted({int(classes[a.GetIdx()]) for a in mol_h.GetAtoms() if a.GetSymbol() == "H"}):
        members = [a for a in mol_h.GetAtoms() if a.GetSymbol() == "H" and classes[a.GetIdx()] == cls]
        carrier = members[0].GetNeighbors()[0]
        vicinal = sum(n.GetTotalNumHs() for n in carrier.GetNeighbors() if n.GetSymbol() == "C")
        mult = "s" if carrier.GetSymbol() != "C" else multiplicity(vicinal)
        peaks.append((round(float(shifts[members[0].GetIdx()]), 2), len(members), mult))
    return peaks


def _carbon_peaks(mol_h: Chem.Mol, shifts: np.ndarray, classes: np.ndarray) -> list[float]:
    """One value per carbon symmetry class, rounded to 0.1 ppm."""
    first = {}
    for atom in mol_h.GetAtoms():
        if atom.GetSymbol() == "C":
            first.setdefault(int(classes[atom.GetIdx()]), round(float(shifts[atom.GetIdx()]), 1))
    return list(first.values())


def _corrupt(kind: str, nucleus: str, h_peaks: list, c_peaks: list, rng: np.random.Generator) -> tuple[str, str] | None:
    """(text, smiles override) for a malformed row of ``kind``; None when this molecule cannot show that defect."""
    if nucleus == "1H":
        peaks = sorted(h_peaks, key=lambda p: -p[0])
        if kind == "not_monotone":
            if len(peaks) < 3 or peaks[0][0] <= peaks[1][0]:
                return None
            text = render_proton_text(peaks)
            parts = _split_top(text[2:])
            parts[0], parts[1] = parts[1], parts[0]
            return "δ " + ", ".join(parts), ""
        if kind == "count_mismatch":
            shift, n_h, mult = peaks[0]
            return render_proton_text([(shift, n_h + 1, mult)] + peaks[1:]), ""
        if kind == "out_of_range":
            return render_proton_text([(16.5, 1, "s")] + peaks), ""
        if kind == "broad_range":
            shift, n_h, mult = peaks[-1]
            text = render_proton_text(peaks[:-1])
            return text + f", {shift + 0.3:.2f}–{shift - 0.3:.2f} (m, {n_h}H)", ""
    else:
        values = sorted(c_peaks, reverse=True)
        if kind == "not_monotone":
            if len(values) < 3 or values[0] <= values[1]:
                return None
            return render_carbon_text(values).replace(
                f"{values[0]:.1f}, {values[1]:.1f}", f"{values[1]:.1f}, {values[0]:.1f}", 1
            ), ""
        if kind == "count_mismatch":
            return (render_carbon_text(values[1:]), "") if len(values) >= 2 else None
        if kind == "out_of_range":
            return render_carbon_text([260.0] + values), ""
        if kind == "broad_range":
            return None
    if kind == "unparsable_text":
        base = render_proton_text(h_peaks) if nucleus == "1H" else render_carbon_text(c_peaks)
        return base + ", see the Supporting Information", ""
    if kind == "bad_smiles":
        base = render_proton_text(h_peaks) if nucleus == "1H" else render_carbon_text(c_peaks)
        return base, "C1CC(=O"
    return None


def _split_top(text: str) -> list[str]:
    """Split a rendered ¹H list at commas between peaks (commas inside parentheses stay)."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return parts + [current.strip()]


def generate(
    out_dir: str | os.PathLike, molecules_file: str | os.PathLike, settings: dict[str, Any]
) -> dict[str, Path]:
    """Write the synthetic SD file, literature parquet and truth file under ``out_dir``; return their paths."""
    out_dir = Path(out_dir)
    rng = np.random.default_rng(settings["seed"])
    smiles = read_molecule_list(molecules_file)
    need = settings["n_labelled"] + settings["n_unlabelled"]
    if need > len(smiles):
        raise ValueError(f"{molecules_file}: {len(smiles)} molecules, config asks for {need}")
    chosen = [smiles[i] for i in rng.permutation(len(smiles))[:need]]
    groups = list(SOLVENT_GROUPS)
    probs = np.array([settings["solvent_fractions"][g] for g in groups], float)
    noise = {"1H": settings["noise_ppm"]["1H"], "13C": settings["noise_ppm"]["13C"]}

    sdf_entries, rows, truth = [], [], []
    for i, smi in enumerate(chosen):
        mol_h = Chem.AddHs(Chem.MolFromSmiles(smi))
        solvent = groups[rng.choice(len(groups), p=probs / probs.sum())]
        classes = symmetry_classes(mol_h)
        shifts = noisy_shifts(mol_h, solvent, classes, rng, noise)
        if i < settings["n_labelled"]:
            carbons = [
                (shifts["13C"][a.GetIdx()], "SDTQ"[min(a.GetTotalNumHs(includeNeighbors=True), 3)], a.GetIdx())
                for a in mol_h.GetAtoms()
                if a.GetSymbol() == "C"
            ]
            protons = [(shifts["1H"][a.GetIdx()], "S", a.GetIdx()) for a in mol_h.GetAtoms() if a.GetSymbol() == "H"]
            props = {
                "nmrshiftdb2 ID": f"synthetic-{i:05d}",
                "Solvent": SDF_SOLVENT_NAMES[solvent],
                "Spectrum 13C 0": format_spectrum_field(carbons, settings["atom_index_base"], decimals=1),
                "Spectrum 1H 0": format_spectrum_field(protons, settings["atom_index_base"], decimals=2),
            }
            sdf_entries.append((mol_h, props))
            continue
        h_peaks = _proton_peaks(mol_h, shifts["1H"], classes)
        c_peaks = _carbon_peaks(mol_h, shifts["13C"], classes)
        for nucleus in ("1H", "13C"):
            kind, text, smiles_out = "clean", None, smi
            if rng.random() < settings["malformed_fraction"]:
                wanted = MALFORMED_KINDS[rng.integers(len(MALFORMED_KINDS))]
                corrupted = _corrupt(wanted, nucleus, h_peaks, c_peaks, rng)
                if corrupted is not None:
                    kind, (text, override) = wanted, corrupted
                    smiles_out = override or smi
            if text is None:
                as_range = list(rng.random(len(h_peaks)) < 0.2)
                text = render_proton_text(h_peaks, as_range) if nucleus == "1H" else render_carbon_text(c_peaks)
            processed = (
                [(p[2], "", f"{p[1]}H", p[0], p[0]) for p in h_peaks]
                if nucleus == "1H"
                else [("", "", "", v, v) for v in c_peaks]
            )
            rows.append(
                {
                    "filename": f"10.0000/synthetic.{i:05d}",
                    "smiles": smiles_out,
                    "page_in_file_smiles": 1,
                    "nmr_type": f"{nucleus} NMR",
                    "nmr_shift": text,
                    "nmr_processed": str(processed),
                    "nmr_frequency": "400 MHz" if nucleus == "1H" else "101 MHz",
                    "nmr_solvent": TEXT_SOLVENT_NAMES[solvent],
                    "nmr_note": "synthetic (teacher shifts, not experimental)",
                    "location_in_page_smiles": "",
                    "location_in_page_para": "",
                    "atom_number": sum(a.GetSymbol() == nucleus[-1] for a in mol_h.GetAtoms()),
                    "atom_number_diff_env": len(h_peaks) if nucleus == "1H" else len(c_peaks),
                    "atom_number_abstract": "",
                }
            )
            truth.append({"row": len(rows) - 1, "kind": kind, "nucleus": nucleus})
    paths = {
        "labelled_sdf": out_dir / "nmrshiftdb2withsignals.sd",
        "literature": out_dir / "NMRexp_synthetic.parquet",
        "truth": out_dir / "truth.json",
    }
    with atomic_path(paths["labelled_sdf"]) as tmp:
        write_sdf(tmp, sdf_entries)
    with atomic_path(paths["literature"]) as tmp:
        pd.DataFrame(rows, columns=NMREXP_COLUMNS).to_parquet(tmp, index=False)
    write_json(
        paths["truth"], {"note": "synthetic rows; kind != 'clean' marks a deliberately malformed row", "rows": truth}
    )
    return paths
