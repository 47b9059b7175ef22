"""Synthetic raw files through the real parsers and filters: every malformed row rejected, every clean row kept."""

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from rdkit import Chem

from repro.data.spectra import process, raw
from repro.data.spectra.molecules import symmetry_classes
from repro.workflow.entry import Job
from repro.workflow.io import InputError, read_json

SECTION = {
    "source": "embedded",
    "embedded": {
        "seed": 3,
        "n_labelled": 8,
        "n_unlabelled": 40,
        "malformed_fraction": 0.4,
        "noise_ppm": {"1H": 0.01, "13C": 0.1},
        "solvent_fractions": {"CDCl3": 0.6, "DMSO-d6": 0.3, "other": 0.1},
        "atom_index_base": 0,
    },
}
SETTINGS = {
    "atom_index_base": 0,
    "h_gap": 0.2,
    "folds": 5,
    "cv_seed": 42,
    "representative_seed": 42,
    "nuclei": ["1H", "13C"],
}


def _run(tmp: Path, repo: Path, section=SECTION) -> SimpleNamespace:
    out = SimpleNamespace(
        labelled=str(tmp / "labelled.parquet"),
        unlabelled=str(tmp / "unlabelled.parquet"),
        rejections=str(tmp / "rej.json"),
        manifest=str(tmp / "manifest.json"),
    )
    raw.main(
        Job(
            SimpleNamespace(molecules=str(repo / "resources/spectra/molecules.smi")),
            SimpleNamespace(raw=str(tmp / "raw.json")),
            SimpleNamespace(section=section, raw_dir=str(tmp)),
        )
    )
    process.main(
        Job(
            SimpleNamespace(raw=str(tmp / "raw.json")),
            out,
            SimpleNamespace(settings=SETTINGS, conformer_dir=str(tmp / "conformers")),
        )
    )
    return out


@pytest.fixture(scope="module")
def processed(tmp_path_factory, repo):
    return _run(tmp_path_factory.mktemp("spectra"), repo)


def test_malformed_rows_rejected_for_their_reason_and_clean_rows_kept(processed):
    check = read_json(processed.rejections)["synthetic_check"]
    assert check.get("malformed_rejected", 0) >= 5
    assert check.get("malformed_kept", 0) == 0
    assert check.get("clean_rejected", 0) == 0
    assert check["malformed_reason_matches"] == check["malformed_rejected"]
    assert check["clean_kept"] > 0


def test_rejection_report_counts_every_record(processed):
    report = read_json(processed.rejections)
    rows = len(read_json(Path(processed.rejections).with_name("raw.json"))["files"])
    assert rows == 2
    literature = pd.read_parquet(next(Path(processed.rejections).parent.glob("embedded/*.parquet")))
    handled = sum(
        report["kept"].get(f"unlabelled/{n}", 0) + report["rejected_total"].get(f"unlabelled/{n}", 0)
        for n in ("1H", "13C")
    )
    assert handled == len(literature)


def test_selection_counts_match_hydrogens_and_carbon_classes(processed):
    for path in (processed.labelled, processed.unlabelled):
        frame = pd.read_parquet(path)
        assert {
            "mol_id",
            "smiles",
            "nucleus",
            "solvent_group",
            "fold",
            "atoms",
            "coordinates",
            "target_mask",
            "target",
            "observed",
        } <= set(frame.columns)
        for row in frame.itertuples():
            mol = Chem.AddHs(Chem.MolFromSmiles(row.smiles))
            assert list(row.atoms) == [a.GetAtomicNum() for a in mol.GetAtoms()]
            assert len(row.coordinates) == 3 * len(row.atoms)
            assert len(row.observed) == int(np.sum(row.target_mask))
            if "unlabelled" in path and row.nucleus == "1H":
                assert int(np.sum(row.target_mask)) == sum(a.GetAtomicNum() == 1 for a in mol.GetAtoms())
            if "unlabelled" in path and row.nucleus == "13C":
                classes = symmetry_classes(mol)[np.asarray(row.atoms) == 6]
                assert int(np.sum(row.target_mask)) == len(set(classes))


def test_labelled_targets_are_equal_on_symmetric_atoms(processed):
    frame = pd.read_parquet(processed.labelled)
    for row in frame.itertuples():
        classes = symmetry_classes(Chem.AddHs(Chem.MolFromSmiles(row.smiles)))
        target = np.asarray(row.target)
        for cls in np.unique(classes[np.asarray(row.target_mask)]):
            values = target[(classes == cls) & np.asarray(row.target_mask)]
            assert np.ptp(values) < 1e-4


def test_changed_raw_file_stops_with_clear_error(tmp_path, repo):
    _run(tmp_path, repo)
    sdf = next(tmp_path.glob("embedded/*.sd"))
    sdf.write_text(sdf.read_text() + "\n")
    out = SimpleNamespace(
        labelled=str(tmp_path / "l2.parquet"),
        unlabelled=str(tmp_path / "u2.parquet"),
        rejections=str(tmp_path / "r2.json"),
        manifest=str(tmp_path / "m2.json"),
    )
    with pytest.raises(InputError, match="sha256 differs"):
        process.main(
            Job(
                SimpleNamespace(raw=str(tmp_path / "raw.json")),
                out,
                SimpleNamespace(settings=SETTINGS, conformer_dir=str(tmp_path / "conformers")),
            )
        )
    assert not Path(out.labelled).exists()


def test_unreadable_sdf_entry_is_counted_and_the_rest_kept(tmp_path):
    from repro.data.spectra.molecules import ConformerCache
    from repro.data.spectra.sdf import write_sdf

    good = Chem.AddHs(Chem.MolFromSmiles("CCO"))
    props = {"nmrshiftdb2 ID": "1", "Solvent": "0:Chloroform-D1 (CDCl3)", "Spectrum 13C 0": "18.1;0.0Q;0|58.3;0.0T;1|"}
    path = tmp_path / "two.sd"
    write_sdf(path, [(good, props), (good, props)])
    text = path.read_text()
    first_end = text.index("$$$$") + 5
    broken = text[:first_end] + text[first_end:].replace("V2000", "V2000\nnot an atom line", 1)
    path.write_text(broken)
    log = process.RejectionLog()
    rows = list(process.labelled_rows(path, "13C", SETTINGS, ConformerCache(tmp_path / "c"), log))
    assert len(rows) == 1
    assert log.counts["labelled/13C"]["bad_molecule"] == 1
    np.testing.assert_allclose(sorted(rows[0]["observed"]), [18.1, 58.3], rtol=1e-6)
