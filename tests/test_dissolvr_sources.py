"""DISSOLVR's readers: AqSolDB / BigSolDB CSVs in their real layouts and the Huuskonen SD file, bad rows named."""

import json
import logging

import pandas as pd
import pytest
from rdkit import Chem

from repro.fixtures import aqsoldb, bigsoldb
from repro.papers.dissolvr.sources import COLUMNS, read_aqsoldb, read_bigsoldb, read_sdf
from repro.workflow.io import InputError

AQSOLDB_HEADER = ["ID", "Name", "InChI", "InChIKey", "SMILES", "Solubility", "SD", "Ocurrences", "Group"]


def aqsoldb_file(path, rows):
    pd.DataFrame(
        [[f"A-{i}", f"mol{i}", "", "", s, y, 0.0, 1, "G1"] for i, (s, y) in enumerate(rows)], columns=AQSOLDB_HEADER
    ).to_csv(path, index=False)
    return path


def test_aqsoldb_reader_keeps_good_rows_and_drops_bad_smiles_and_missing_values(tmp_path):
    rows = [("CCO", 1.1), ("c1ccccc1", -1.64), ("C1CC", -2.0), ("CC(=O)O", None)] + [("CCCC", -2.6)] * 36
    table, refused = read_aqsoldb(aqsoldb_file(tmp_path / "aq.csv", rows))
    assert refused["refused"] == 2 and refused["first_refused"] == ["A-2", "A-3"]
    assert list(table.columns) == COLUMNS
    assert len(table) == 38  # "C1CC" (unclosed ring) and the row without a solubility are dropped
    assert set(table["solvent_smiles"]) == {"O"} and table["T_K"].eq(298.15).all()
    assert table.loc[table["solute_smiles"] == "c1ccccc1", "logS"].item() == -1.64


def test_aqsoldb_reader_names_the_bad_lines_when_too_many_rows_fail(tmp_path):
    path = aqsoldb_file(tmp_path / "aq.csv", [("CCO", 1.1), ("not-a-smiles", -1.0), ("CCC", "n/a")])
    with pytest.raises(InputError, match=r"2 of 3 rows refused.*first ids \['A-1', 'A-2'\]") as err:
        read_aqsoldb(path)
    assert str(path) in str(err.value)


def test_reader_names_missing_columns_and_files(tmp_path):
    path = tmp_path / "wrong.csv"
    pd.DataFrame({"smiles": ["CCO"], "logS": [1.0]}).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"missing columns \['ID', 'SMILES', 'Solubility'\]"):
        read_aqsoldb(path)
    with pytest.raises(InputError, match="not found"):
        read_bigsoldb(tmp_path / "absent.csv")


def test_bigsoldb_reader_keeps_solvent_and_temperature(tmp_path):
    path = tmp_path / "big.csv"
    pd.DataFrame(
        {
            "SMILES_Solute": ["c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "C(((", "CCO"],
            "SMILES_Solvent": ["CCO", "CO", "CCO", "CC(C)=O"],
            "Temperature_K": [298.15, 313.15, 298.15, None],
            "LogS(mol/L)": [0.5, -0.7, 0.1, 0.2],
            "Source": ["a", "b", "c", "d"],
        }
    ).to_csv(path, index=False)
    table, refused = read_bigsoldb(path, max_bad_fraction=0.5)
    assert refused["first_refused"] == ["line 4", "line 5"]
    assert table["solvent_smiles"].tolist() == ["CCO", "CO"]
    assert table["T_K"].tolist() == [298.15, 313.15]


def test_sdf_reader_reads_sol_and_names_records_without_it(tmp_path):
    good = tmp_path / "good.sdf"
    writer = Chem.SDWriter(str(good))
    for smiles, sol in (("CCO", "1.10"), ("c1ccccc1", "-1.64")):
        mol = Chem.MolFromSmiles(smiles)
        mol.SetProp("SOL", sol)
        writer.write(mol)
    writer.close()
    table = read_sdf(good, "train")
    assert table["logS"].tolist() == [1.10, -1.64] and set(table["split"]) == {"train"}
    bad = tmp_path / "bad.sdf"
    writer = Chem.SDWriter(str(bad))
    writer.write(Chem.MolFromSmiles("CCC"))
    writer.close()
    with pytest.raises(InputError, match="SOL property"):
        read_sdf(bad, "test")


def test_data_stage_names_a_missing_full_scale_csv_and_reads_a_present_one(tmp_path):
    from types import SimpleNamespace as NS

    from repro.papers.dissolvr import data

    out = NS(table=str(tmp_path / "t.parquet"), manifest=str(tmp_path / "m.json"))
    missing = {"source": {"kind": "aqsoldb", "path": str(tmp_path / "absent.csv")}}
    with pytest.raises(InputError, match="Dataverse"):
        data.main(NS(params=NS(settings=missing), input=NS(), output=out))
    path = aqsoldb_file(tmp_path / "aq.csv", [("CCO", 1.1), ("c1ccccc1", -1.64)])
    present = {"source": {"kind": "aqsoldb", "path": str(path)}}
    data.main(NS(params=NS(settings=present), input=NS(user_data=[str(path)]), output=out))
    assert pd.read_parquet(out.table)["logS"].tolist() == [1.1, -1.64]
    manifest = json.loads((tmp_path / "m.json").read_text())
    (record,) = [f for f in manifest["files"] if f["role"] == "input:aqsoldb"]
    assert record["bytes"] == path.stat().st_size and len(record["sha256"]) == 64
    assert manifest["details"]["refused"]["aqsoldb"]["refused"] == 0


@pytest.mark.parametrize("writer, reader", [(aqsoldb, read_aqsoldb), (bigsoldb, read_bigsoldb)])
def test_published_layout_fixtures_read_with_their_broken_rows_counted_and_named(tmp_path, caplog, writer, reader):
    (path,) = writer.write(tmp_path)
    with caplog.at_level(logging.WARNING):
        table, refused = reader(path)
    assert refused["refused"] == 2 and len(table) == refused["read"] - 2
    assert all(ident in caplog.text for ident in refused["first_refused"])
    assert table["logS"].between(-15, 3).all() and table["T_K"].between(150, 700).all()


@pytest.mark.parametrize("writer, reader", [(aqsoldb, read_aqsoldb), (bigsoldb, read_bigsoldb)])
def test_a_file_cut_inside_its_last_row_refuses_that_row_instead_of_misreading_it(tmp_path, writer, reader):
    (path,) = writer.write(tmp_path)
    whole, _ = reader(path)
    text = path.read_text()
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    cut = text.rstrip("\n")[: -(len(last) - last.index(",", last.index(",") + 1) - 3)]  # inside the third field
    path.write_text(cut)
    table, refused = reader(path)
    assert refused["refused"] == 3 and "fields where the header has" in " ".join(refused["reasons"])
    assert len(table) == len(whole) - 1
    pd.testing.assert_frame_equal(table, whole.iloc[:-1])


def test_a_value_out_of_range_is_refused_and_more_than_the_allowed_fraction_stops(tmp_path):
    path = aqsoldb_file(tmp_path / "aq.csv", [("CCO", 1.1), ("CCC", 45.0)] + [("CCCC", -2.6)] * 38)
    table, refused = read_aqsoldb(path)
    assert list(refused["reasons"]) == ["Solubility outside [-15.0, 3.0] log10(mol/L)"] and len(table) == 39
    with pytest.raises(InputError, match="more than the allowed fraction 0.01"):
        read_aqsoldb(path, max_bad_fraction=0.01)


@pytest.mark.e2e
def test_replacing_the_users_csv_reruns_the_reader_and_what_it_feeds(tmp_path):
    from user_file_reruns import user_file_rerun

    csv_path = "user/aqsoldb/curated-solubility-dataset.csv"

    def place(root):
        (root / csv_path).parent.mkdir(parents=True)
        aqsoldb.write(root / "user/aqsoldb")

    def change(root):
        path = root / csv_path
        lines = path.read_text().splitlines()
        path.write_text("\n".join(lines[:-1]) + "\n")  # a corrected release: one row fewer

    overlay = {"papers": {"dissolvr": {"source": {"path": csv_path}}}}
    targets = ["results/dissolvr/data/features.parquet", "results/dissolvr/data/manifest.json"]
    scheduled, ran = user_file_rerun(tmp_path, overlay, place, targets, change)
    assert ran == ["dissolvr_data", "dissolvr_featurize"]
    assert scheduled == ["dissolvr_data", "dissolvr_featurize"]
