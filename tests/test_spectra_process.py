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
from repro.workflow.io import InputError, read_json, sha256

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


def _run(tmp: Path, repo: Path, section=SECTION, settings=SETTINGS) -> SimpleNamespace:
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
            SimpleNamespace(settings=settings, conformer_dir=str(tmp / "conformers")),
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


def _run_local(tmp: Path, repo: Path, settings=SETTINGS) -> SimpleNamespace:
    """The published-layout fixtures (repro.fixtures.nmrshiftdb2 / nmrexp) through source ``local``."""
    from repro.fixtures import nmrexp, nmrshiftdb2

    (sdf,), (table,) = nmrshiftdb2.write(tmp), nmrexp.write(tmp)
    section = {
        "source": "local",
        "local": {"files": [{"path": str(sdf), "role": "labelled_sdf"}, {"path": str(table), "role": "literature"}]},
    }
    return _run(tmp, repo, section, settings)


@pytest.fixture(scope="module")
def published(tmp_path_factory, repo):
    return _run_local(tmp_path_factory.mktemp("published"), repo)


def test_published_layouts_read_with_missing_shifts_honoured_and_refusals_counted(published):
    manifest = read_json(published.manifest)
    details = manifest["details"]
    # the SD fixture: one carbon signal without a shift (missing, counted), one 1H field that is no signal list
    assert details["missing_shifts"] == {"1H": 0, "13C": 1}
    assert details["refused"]["labelled"]["refused"] == 1
    assert "unparsable_text" in details["refused"]["labelled"]["first_refused"][0]
    # the NMRexp fixture: one integration too many (refused), one 19F row (a selection, not a refusal)
    assert details["refused"]["unlabelled"]["refused"] == 1
    rejected = read_json(published.rejections)["rejected"]
    assert rejected["unlabelled/other"] == {"other_nucleus": 1}
    assert rejected["unlabelled/1H"] == {"count_mismatch": 1}
    inputs = {f["role"]: f for f in manifest["files"] if "role" in f}
    for role in ("labelled_sdf", "literature"):
        path = Path(published.manifest).parent / inputs[role]["path"]
        assert inputs[role]["bytes"] == path.stat().st_size and inputs[role]["sha256"] == sha256(path)


def test_a_missing_shift_leaves_its_atom_unassigned_not_zero(published):
    labelled = pd.read_parquet(published.labelled)
    carbon = labelled[labelled["nucleus"] == "13C"]
    fourth = carbon[carbon["mol_id"] == str(20000000 + 17 * 3)].iloc[0]
    carbons = np.asarray(fourth["atoms"]) == 6
    target = np.asarray(fourth["target"], float)
    assert np.isnan(target[carbons]).sum() == 1 and np.all(target[np.isfinite(target)] > 5)
    assert len(fourth["observed"]) == carbons.sum() - 1


def test_more_refused_than_the_allowed_fraction_stops_naming_the_file(tmp_path, repo):
    strict = SETTINGS | {"max_refused_fraction": {"labelled": 0.01, "unlabelled": 0.8}}
    with pytest.raises(InputError, match=r"nmrshiftdb2withsignals.sd: 1 of \d+ labelled records refused"):
        _run_local(tmp_path, repo, strict)


@pytest.mark.e2e
def test_replacing_the_users_sd_file_reruns_exactly_the_spectra_rules(tmp_path):
    from user_file_reruns import user_file_rerun

    from repro.fixtures import nmrexp, nmrshiftdb2

    folder = "user/spectra"
    files = [
        {"path": f"{folder}/{nmrshiftdb2.FILE}", "role": "labelled_sdf"},
        {"path": f"{folder}/{nmrexp.FILE}", "role": "literature"},
    ]

    def place(root):
        (root / folder).mkdir(parents=True)
        nmrshiftdb2.write(root / folder)
        nmrexp.write(root / folder)

    def change(root):  # a corrected release: the last record withdrawn
        path = root / folder / nmrshiftdb2.FILE
        records = path.read_text().split("$$$$\n")
        path.write_text("$$$$\n".join(records[:-2]) + "$$$$\n")

    overlay = {"data": {"spectra": {"source": "local", "local": {"files": files}}}}
    scheduled, ran = user_file_rerun(tmp_path, overlay, place, ["data/spectra/manifest.json"], change)
    assert ran == ["spectra_data", "spectra_raw"]
    assert scheduled == ["spectra_data", "spectra_raw"]
