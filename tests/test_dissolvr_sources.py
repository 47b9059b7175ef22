"""DISSOLVR's readers: AqSolDB / BigSolDB CSVs in their real layouts and the Huuskonen SD file, bad rows named."""

import pandas as pd
import pytest
from rdkit import Chem

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
    table = read_aqsoldb(aqsoldb_file(tmp_path / "aq.csv", rows))
    assert list(table.columns) == COLUMNS
    assert len(table) == 38  # "C1CC" (unclosed ring) and the row without a solubility are dropped
    assert set(table["solvent_smiles"]) == {"O"} and table["T_K"].eq(298.15).all()
    assert table.loc[table["solute_smiles"] == "c1ccccc1", "logS"].item() == -1.64


def test_aqsoldb_reader_names_the_bad_lines_when_too_many_rows_fail(tmp_path):
    path = aqsoldb_file(tmp_path / "aq.csv", [("CCO", 1.1), ("not-a-smiles", -1.0), ("CCC", "n/a")])
    with pytest.raises(InputError, match=r"2 of 3 rows unusable.*lines \[3\].*lines \[4\]") as err:
        read_aqsoldb(path)
    assert str(path) in str(err.value)


def test_reader_names_missing_columns_and_files(tmp_path):
    path = tmp_path / "wrong.csv"
    pd.DataFrame({"smiles": ["CCO"], "logS": [1.0]}).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"missing columns \['SMILES', 'Solubility'\]"):
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
    table = read_bigsoldb(path, max_bad_fraction=0.5)
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
    data.main(NS(params=NS(settings=present), input=NS(csv=str(path)), output=out))
    assert pd.read_parquet(out.table)["logS"].tolist() == [1.1, -1.64]
