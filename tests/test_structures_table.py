"""The canonical chains table: the build entry on a user's folder, the split, and read_chains' checks."""

import types

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_structures_reader import backbone_atoms, pdb_text, write

from repro.data.structures import COLUMNS, Chain, read_chains
from repro.data.structures.build import assign_splits, main
from repro.workflow.io import InputError, read_json


def build_local(tmp_path, n_files=6, max_refused=0.2):
    root = tmp_path / "mine"
    for k in range(n_files):
        names = ["ALA", "GLY", "LEU", "VAL"][k % 4 : k % 4 + 1] * (30 + k)
        write(root / f"p{k}.pdb", pdb_text({"A": names}, {"A": backbone_atoms(30 + k)}))
    write(root / "bad.pdb", "HEADER nonsense\n")
    section = {
        "source": "local",
        "packages": ["mdanalysistests"],
        "min_residues": 10,
        "max_models": 5,
        "split_fractions": [0.5, 0.25, 0.25],
        "seed": 3,
        "local": {"root": str(root), "layout": "folder", "licence": "own data", "max_refused_fraction": max_refused},
    }
    out = types.SimpleNamespace(
        chains=str(tmp_path / "out" / "chains.parquet"), manifest=str(tmp_path / "out" / "manifest.json")
    )
    main(
        types.SimpleNamespace(input=types.SimpleNamespace(), output=out, params=types.SimpleNamespace(section=section))
    )
    return out


def test_local_folder_builds_the_canonical_table_and_manifest(tmp_path):
    out = build_local(tmp_path)
    table = pq.read_table(out.chains)
    assert tuple(table.column_names) == COLUMNS
    assert table.schema.field("backbone").type == pa.list_(pa.float32())
    chains = read_chains(out.chains)
    assert all(isinstance(c, Chain) for c in chains) and len(chains) == 6
    assert chains[2].backbone.shape == (32, 3, 3) and chains[2].backbone.dtype == np.float32
    assert {c.licence for c in chains} == {"own data"}
    manifest = read_json(out.manifest)
    assert manifest["licence"] == "own data"
    roles = [f.get("role") for f in manifest["files"]]
    assert roles.count("input") == 7  # every file the user placed, the refused one too (size and sha256)
    source = manifest["details"]["sources"][0]
    assert any(s["item"].endswith("bad.pdb") for s in source["skipped"])
    assert source["refused_files"]["refused"] == 1 and source["refused_files"]["first_refused"] == ["bad.pdb"]


def test_more_refused_files_than_the_allowed_fraction_stop_the_build(tmp_path):
    with pytest.raises(InputError, match=r"1 of 7 structure files refused.*bad.pdb.*allowed fraction 0.1"):
        build_local(tmp_path, max_refused=0.1)


def test_split_is_seeded_deterministic_and_keeps_identical_sequences_together():
    sequences = [f"SEQ{i % 7}" for i in range(40)]
    a = assign_splits(sequences, [0.7, 0.15, 0.15], seed=0)
    assert a == assign_splits(sequences, [0.7, 0.15, 0.15], seed=0)
    assert a != assign_splits(sequences, [0.7, 0.15, 0.15], seed=1) or len(set(a)) == 1
    for s in set(sequences):
        assert len({split for split, q in zip(a, sequences) if q == s}) == 1
    many = assign_splits([f"S{i}" for i in range(100)], [0.7, 0.15, 0.15], seed=0)
    assert [many.count(s) for s in ("train", "val", "test")] == [70, 15, 15]


def test_read_chains_names_the_file_and_the_problem(tmp_path):
    with pytest.raises(InputError, match="no such chains table"):
        read_chains(tmp_path / "absent.parquet")
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(InputError, match="junk.parquet: not a readable parquet"):
        read_chains(tmp_path / "junk.parquet")
    out = build_local(tmp_path)
    table = pq.read_table(out.chains)
    pq.write_table(table.drop(["dssp"]), tmp_path / "nodssp.parquet")
    with pytest.raises(InputError, match=r"missing columns \['dssp'\]"):
        read_chains(tmp_path / "nodssp.parquet")
    short = table.set_column(COLUMNS.index("n_residues"), "n_residues", pa.array([5] * table.num_rows, pa.int32()))
    pq.write_table(short, tmp_path / "short.parquet")
    with pytest.raises(InputError, match="disagrees"):
        read_chains(tmp_path / "short.parquet")
