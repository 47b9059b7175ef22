"""mdtraj preprocessing of the ATLAS layout on the embedded MDAnalysisTests data, and its bad-input paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import mdtraj as md
import numpy as np
import pytest

from repro.data.atlas import preprocess
from repro.data.atlas.atom14 import ATOM14
from repro.data.atlas.embedded import build_embedded
from repro.data.atlas.layout import replicate_paths
from repro.data.atlas.preprocess import (
    load_topology,
    naive_read_replicate,
    preprocess_all,
    process_protein,
    select_atoms,
)
from repro.workflow.io import InputError

ADK_HEAVY_ATOMS = 1656  # AdK 214 residues: heavy atoms by residue composition (see test below)


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("atlas") / "raw"
    root.mkdir()
    build_embedded(root)
    return root


@pytest.fixture(scope="module")
def processed(raw, tmp_path_factory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("processed")
    rows, errors = preprocess_all(
        raw,
        ["adk", "adkopls", "cobrotoxin"],
        out,
        stride=1,
        workers=2,
        replicates={"adk": [1, 2, 3], "adkopls": [1], "cobrotoxin": [1]},
    )
    assert errors == {}
    return out, rows


def _copy_entry(raw: Path, name: str, dest: Path) -> Path:
    shutil.copytree(raw / name, dest / name)
    return dest


def test_embedded_layout_has_three_adk_replicates_in_atlas_naming(raw):
    assert sorted(p.name for p in replicate_paths(raw, "adk").values()) == [
        "adk_prod_R1_fit.xtc",
        "adk_prod_R2_fit.xtc",
        "adk_prod_R3_fit.xtc",
    ]
    frames = [md.load(str(p), top=str(raw / "adk" / "adk.pdb")).n_frames for p in replicate_paths(raw, "adk").values()]
    assert frames == [98, 102, 100]


def test_embedded_chains_are_whole_in_every_frame(processed):
    out, rows = processed
    for row in rows:
        ca = np.load(out / row["name"] / f"{row['name']}_R{row['replicate']}_ca.npy")
        assert np.linalg.norm(np.diff(ca, axis=1), axis=-1).max() < 4.5, row["name"]


def test_heavy_atom_count_matches_residue_composition(raw):
    top = load_topology(raw / "adk" / "adk.pdb", "adk")
    sel = select_atoms(top, raw / "adk" / "adk.pdb", "adk")
    from_composition = sum(len(ATOM14[("HIS" if r.name.startswith("HS") else r.name)]) for r in top.residues)
    oxt = sum(1 for a in top.atoms if a.name == "OXT")
    assert len(sel.atom_indices) == ADK_HEAVY_ATOMS == from_composition + oxt
    assert (sel.atom14 >= 0).sum() == from_composition


def test_topology_with_guessed_elements_is_refused(tmp_path):
    import MDAnalysisTests.datafiles as datafiles

    with pytest.raises(InputError, match="hydrogen names with non-hydrogen elements"):
        load_topology(Path(datafiles.PDB_closed), "adk")


def test_outputs_dtypes_units_and_superposition(processed, raw):
    out, rows = processed
    atom14 = np.load(out / "adk" / "adk_R1_i1.npy")
    ca = np.load(out / "adk" / "adk_R1_ca.npy")
    assert atom14.dtype == np.float16 and ca.dtype == np.float32
    assert atom14.shape == (98, 214, 14, 3) and ca.shape == (98, 214, 3)
    bond = np.linalg.norm(np.diff(ca[0], axis=0), axis=-1)
    assert np.median(bond) == pytest.approx(3.8, abs=0.1)  # Angstrom, not nm
    np.testing.assert_allclose(atom14[:, :, 1].astype(np.float32), ca, atol=0.02)
    first = md.load(str(raw / "adk" / "adk_prod_R1_fit.xtc"), top=str(raw / "adk" / "adk.pdb"))
    heavy = first.topology.select("not element H")
    # every frame is superposed on frame 0: frame 0 keeps its coordinates
    np.testing.assert_allclose(
        ca[0],
        first.xyz[0, heavy][
            first.topology.atom(heavy[0]).index * 0
            + np.array([i for i, a in enumerate(heavy) if first.topology.atom(a).name == "CA"])
        ]
        * 10,
        atol=1e-3,
    )
    assert {(r["name"], r["replicate"]) for r in rows} == {
        ("adk", 1),
        ("adk", 2),
        ("adk", 3),
        ("adkopls", 1),
        ("cobrotoxin", 1),
    }


def test_fast_path_equals_naive_path_with_stride(raw, tmp_path):
    top_path = raw / "adk" / "adk.pdb"
    naive = naive_read_replicate(raw / "adk" / "adk_prod_R2_fit.xtc", top_path, stride=3)
    process_protein(raw, "adk", tmp_path, stride=3, replicates=[2])
    ca = np.load(tmp_path / "adk" / "adk_R2_ca.npy")
    atom14 = np.load(tmp_path / "adk" / "adk_R2_i3.npy")
    assert len(ca) == len(naive) == 34
    top = load_topology(top_path, "adk")
    sel = select_atoms(top, top_path, "adk")
    np.testing.assert_allclose(ca, naive[:, sel.ca], atol=1e-3)
    filled = sel.atom14 >= 0
    np.testing.assert_allclose(atom14[:, filled].astype(np.float32), naive[:, sel.atom14[filled]], atol=0.05)


def test_current_atlas_naming_is_accepted(raw, tmp_path):
    root = _copy_entry(raw, "cobrotoxin", tmp_path / "raw")
    (root / "cobrotoxin" / "cobrotoxin_prod_R1_fit.xtc").rename(root / "cobrotoxin" / "cobrotoxin_R1.xtc")
    rows = process_protein(root, "cobrotoxin", tmp_path / "out", stride=1, replicates=[1])
    assert rows[0]["source_file"] == "cobrotoxin_R1.xtc" and rows[0]["n_frames"] == 3


def test_truncated_xtc_names_protein_and_file_and_leaves_nothing(raw, tmp_path):
    root = _copy_entry(raw, "adk", tmp_path / "raw")
    _copy_entry(raw, "cobrotoxin", root)
    xtc = root / "adk" / "adk_prod_R2_fit.xtc"
    data = xtc.read_bytes()
    xtc.write_bytes(data[: len(data) // 2 + 999])
    out = tmp_path / "out"
    rows, errors = preprocess_all(
        root, ["adk", "cobrotoxin"], out, stride=1, workers=2, replicates={"adk": [1, 2, 3], "cobrotoxin": [1]}
    )
    assert set(errors) == {"adk"}
    assert "protein adk" in errors["adk"] and "adk_prod_R2_fit.xtc" in errors["adk"]
    assert not (out / "adk").exists()
    assert [r["name"] for r in rows] == ["cobrotoxin"] and (out / "cobrotoxin" / "cobrotoxin_R1_ca.npy").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_truncation_at_a_frame_boundary_is_caught_by_the_expected_count(raw, tmp_path):
    root = _copy_entry(raw, "cobrotoxin", tmp_path / "raw")
    with pytest.raises(InputError, match="expected 10"):
        process_protein(root, "cobrotoxin", tmp_path / "out", stride=1, replicates=[1], expected_frames=10)
    assert not (tmp_path / "out" / "cobrotoxin").exists()


def test_topology_that_does_not_match_the_trajectory(raw, tmp_path):
    root = _copy_entry(raw, "adk", tmp_path / "raw")
    shutil.copy(raw / "cobrotoxin" / "cobrotoxin.pdb", root / "adk" / "adk.pdb")
    with pytest.raises(InputError, match=r"protein adk: trajectory has 3341 atoms, topology 9\d\d"):
        process_protein(root, "adk", tmp_path / "out", stride=1, replicates=[1])
    assert not (tmp_path / "out" / "adk").exists()


def test_missing_replicate(raw, tmp_path):
    root = _copy_entry(raw, "adk", tmp_path / "raw")
    (root / "adk" / "adk_prod_R3_fit.xtc").unlink()
    with pytest.raises(InputError, match="protein adk: replicate R3 missing") as err:
        process_protein(root, "adk", tmp_path / "out", stride=1, replicates=[1, 2, 3])
    assert "adk_prod_R3_fit.xtc" in str(err.value)
    assert not (tmp_path / "out" / "adk").exists()


@pytest.mark.parametrize("stride", [1, 4, 7])
def test_chunked_seeking_reader_equals_naive_across_chunk_boundaries(raw, tmp_path, monkeypatch, stride):
    """Small chunks make every replicate span several: seeking (stride > 1) and sequential reads (stride 1)
    must keep exactly the frames 0, stride, 2 stride, ... superposed on frame 0, as the naive path does."""
    monkeypatch.setattr(preprocess, "CHUNK_FRAMES", 5)
    top_path = raw / "adk" / "adk.pdb"
    naive = naive_read_replicate(raw / "adk" / "adk_prod_R1_fit.xtc", top_path, stride=stride)
    rows = process_protein(raw, "adk", tmp_path, stride=stride, replicates=[1])
    top = load_topology(top_path, "adk")
    sel = select_atoms(top, top_path, "adk")
    ca = np.load(tmp_path / "adk" / "adk_R1_ca.npy")
    atom14 = np.load(tmp_path / "adk" / f"adk_R1_i{stride}.npy")
    assert rows[0]["n_frames"] == len(ca) == len(atom14) == len(naive)
    assert ca.dtype == np.float32 and atom14.dtype == np.float16 and atom14.shape[1:] == (len(sel.ca), 14, 3)
    np.testing.assert_allclose(ca, naive[:, sel.ca], atol=1e-3)
    filled = sel.atom14 >= 0
    np.testing.assert_allclose(atom14[:, filled].astype(np.float32), naive[:, sel.atom14[filled]], atol=0.05)
    assert np.isnan(atom14[:, ~filled].astype(np.float32)).all()


def test_published_layout_fixture_in_both_namings_preprocesses(tmp_path):
    """The rehearsal's ATLAS fixture (repro.fixtures.atlas): one chain in the older ``_prod_R{i}_fit.xtc``
    naming, one in the current ``_R{i}.xtc``, 1,000 frames per replicate as the analysis archives."""
    from repro.data.atlas.preprocess import preprocess_all
    from repro.fixtures import atlas

    atlas.write(tmp_path / "raw")
    names = list(atlas.CHAINS)
    rows, errors = preprocess_all(tmp_path / "raw", names, tmp_path / "out", 40, 1, [1, 2, 3], 1000)
    assert not errors and sorted({r["name"] for r in rows}) == sorted(names)
    assert {r["source_file"].endswith("_fit.xtc") for r in rows} == {True, False}
    assert all(r["n_frames"] == 25 for r in rows)
    truncated = tmp_path / "raw" / "6o2v_A" / "6o2v_A_R2.xtc"
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    _, errors = preprocess_all(tmp_path / "raw", names, tmp_path / "out2", 40, 1, [1, 2, 3], 1000)
    assert list(errors) == ["6o2v_A"] and "6o2v_A_R2.xtc" in errors["6o2v_A"]


@pytest.mark.e2e
def test_replacing_one_user_trajectory_reruns_exactly_the_atlas_rules(tmp_path):
    from user_file_reruns import user_file_rerun

    from repro.fixtures import atlas

    def place(root):
        (root / "user/atlas").mkdir(parents=True)
        atlas.write(root / "user/atlas")

    def change(root):  # a corrected replicate put in place: the same frames, a new file
        import mdtraj as md

        folder = root / "user/atlas/6irx_A"
        path = folder / "6irx_A_prod_R2_fit.xtc"
        traj = md.load(str(path), top=str(folder / "6irx_A.pdb"))
        traj.xyz[:, 0] += 0.01
        traj.save_xtc(str(path))

    local = {"root": "user/atlas", "splits": ["val", "test"], "train_from": "val", "limit": 1, "archive": "analysis"}
    overlay = {"data": {"atlas": {"source": "local", "local": local, "stride": 40}}}
    scheduled, ran = user_file_rerun(tmp_path, overlay, place, ["data/atlas/manifest.json"], change)
    assert ran == ["atlas_data", "atlas_local"] and scheduled == ["atlas_data", "atlas_local"]
