"""The structures source's file reader: tiny PDB/mmCIF files in the folder, AFDB and CATH layouts, with bad input."""

import gzip
import logging
from pathlib import Path

import numpy as np
import pytest

from repro.data.structures.reader import read_folder, read_structure, structure_files
from repro.metrics.protein_geometry import backbone_dihedrals, build_backbone, place_atom
from repro.workflow.io import InputError

HELIX = (np.deg2rad(-57.0), np.deg2rad(-47.0))


def backbone_atoms(n: int, phi_psi=HELIX) -> np.ndarray:
    """N, CA, C, O of an ideal chain of ``n`` residues (O placed trans to the next N)."""
    bb = build_backbone(np.full(n, phi_psi[0]), np.full(n, phi_psi[1])).astype(np.float64)
    o = np.stack([place_atom(r[0], r[1], r[2], 1.23, np.deg2rad(120.5), phi_psi[1] + np.pi) for r in bb])
    return np.concatenate([bb, o[:, None]], axis=1)


def pdb_text(chains: dict[str, list[str]], coords: dict[str, np.ndarray], skip: set = frozenset(), models: int = 1):
    """PDB text for ``{chain: residue names}`` with N/CA/C/O coordinates; ``skip`` holds (chain, i, atom)."""
    lines, serial = [], 1
    for model in range(models):
        if models > 1:
            lines.append(f"MODEL     {model + 1:4d}")
        for chain, names in chains.items():
            for i, name in enumerate(names):
                record = "ATOM  " if name != "HOH" else "HETATM"
                for j, atom in enumerate(("N", "CA", "C", "O")):
                    if (chain, i, atom) in skip or (name == "HOH" and atom != "O"):
                        continue
                    x, y, z = coords[chain][i, j] + 0.1 * model
                    lines.append(
                        f"{record}{serial:5d}  {atom:<3s} {name:>3s} {chain}{i + 1:4d}    "
                        f"{x:8.3f}{y:8.3f}{z:8.3f}  1.00  0.00           {atom[0]}"
                    )
                    serial += 1
        lines.append("TER")
        if models > 1:
            lines.append("ENDMDL")
    return "\n".join(lines + ["END", ""])


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


def test_helix_chain_reads_with_sequence_backbone_and_dssp(tmp_path):
    coords = backbone_atoms(40)
    names = ["ALA"] * 38 + ["MSE", "GLY"]
    path = write(tmp_path / "helix.pdb", pdb_text({"A": names}, {"A": coords}))
    result = read_structure(path, min_residues=10)
    (chain,) = result.chains
    assert chain.chain_id == "helix"
    assert chain.sequence == "A" * 38 + "MG"  # MSE is read as methionine (ATLAS aliases)
    np.testing.assert_allclose(chain.backbone, coords[:, :3], atol=1e-3)
    phi, _ = backbone_dihedrals(chain.backbone)
    np.testing.assert_allclose(phi[1:], HELIX[0], atol=1e-2)
    assert chain.dssp_source == "mdtraj"
    assert chain.dssp[5:30] == "H" * 25


def test_missing_backbone_atom_cuts_the_chain_and_is_named(tmp_path, caplog):
    coords = backbone_atoms(50)
    path = write(tmp_path / "gap.pdb", pdb_text({"A": ["ALA"] * 50}, {"A": coords}, skip={("A", 24, "CA")}))
    with caplog.at_level(logging.WARNING):
        result = read_structure(path, min_residues=10)
    assert [c.chain_id for c in result.chains] == ["gap_s1", "gap_s2"]
    assert [len(c.sequence) for c in result.chains] == [24, 25]
    assert any("ALA25" in s["reason"] for s in result.skipped)
    assert "missing backbone atoms" in caplog.text


def test_chain_break_by_distance_splits_and_short_pieces_are_skipped(tmp_path):
    coords = backbone_atoms(45)
    coords[30:] += np.array([20.0, 0.0, 0.0])  # a 20 Å jump: residues are missing between 30 and 31
    path = write(tmp_path / "jump.pdb", pdb_text({"A": ["ALA"] * 45}, {"A": coords}))
    result = read_structure(path, min_residues=20)
    assert [len(c.sequence) for c in result.chains] == [30]
    assert any("shorter than min_residues" in s["reason"] for s in result.skipped)


def test_non_standard_residue_water_and_models(tmp_path):
    coords = {"A": backbone_atoms(35), "B": backbone_atoms(35), "W": backbone_atoms(2)}
    chains = {"A": ["GLY"] * 10 + ["PTR"] + ["GLY"] * 24, "B": ["LEU"] * 35, "W": ["HOH", "HOH"]}
    path = write(tmp_path / "ens.pdb.gz", pdb_text(chains, coords, models=3))
    result = read_structure(path, min_residues=10, max_models=2)
    ids = [c.chain_id for c in result.chains]
    assert ids == ["ens_A_m1", "ens_A_m2", "ens_B_m1", "ens_B_m2"]
    assert result.chains[0].sequence[10] == "X"
    np.testing.assert_allclose(result.chains[1].backbone - result.chains[0].backbone, 0.1, atol=2e-3)


def test_shipped_dssp_reference_is_used_when_it_matches(tmp_path):
    coords = backbone_atoms(32)
    path = write(tmp_path / "1abcA.pdb.gz", pdb_text({"A": ["ALA"] * 32}, {"A": coords}))
    reference = "-" * 2 + "H" * 10 + "G" * 3 + "E" * 5 + "B" + "T" * 11
    (tmp_path / "1abcA.pdb.dssp").write_text(f"{reference} 1abcA.pdb\n")
    (chain,) = read_structure(path, min_residues=10).chains
    assert chain.dssp_source == "reference"
    assert chain.dssp == "CC" + "H" * 13 + "E" * 6 + "C" * 11
    (tmp_path / "1abcA.pdb.dssp").write_text("HHH 1abcA.pdb\n")  # wrong length: mdtraj's DSSP instead
    assert read_structure(path, min_residues=10).chains[0].dssp_source == "mdtraj"


def test_malformed_files_are_skipped_and_an_empty_folder_is_an_error(tmp_path):
    write(tmp_path / "good.pdb", pdb_text({"A": ["ALA"] * 30}, {"A": backbone_atoms(30)}))
    write(tmp_path / "broken.pdb", "ATOM      1  N   ALA A   1     not-a-number\nEND\n")
    write(tmp_path / "empty.cif", "")
    result = read_folder(tmp_path, min_residues=10)
    assert [c.chain_id for c in result.chains] == ["good"]
    assert {Path(s["item"]).name for s in result.skipped} >= {"empty.cif"}
    (tmp_path / "good.pdb").unlink()
    with pytest.raises(InputError, match="no usable chains"):
        read_folder(tmp_path, min_residues=10)
    with pytest.raises(InputError, match="does not exist"):
        read_folder(tmp_path / "nowhere")
    with pytest.raises(InputError, match="unknown layout"):
        read_folder(tmp_path, layout="zip")


def test_mmcif_file_reads_like_pdb(tmp_path):
    coords = backbone_atoms(30)
    rows = []
    for i in range(30):
        for j, atom in enumerate(("N", "CA", "C", "O")):
            x, y, z = coords[i, j]
            rows.append(f"ATOM {4 * i + j + 1} {atom[0]} {atom} . ALA A 1 {i + 1} ? {x:.3f} {y:.3f} {z:.3f} 1.0 0.0 1")
    header = [
        "data_test",
        "loop_",
        *[
            f"_atom_site.{k}"
            for k in (
                "group_PDB id type_symbol label_atom_id label_alt_id label_comp_id label_asym_id label_entity_id "
                "label_seq_id pdbx_PDB_ins_code Cartn_x Cartn_y Cartn_z occupancy B_iso_or_equiv "
                "pdbx_PDB_model_num"
            ).split()
        ],
    ]
    path = write(tmp_path / "model.cif", "\n".join(header + rows) + "\n#\n")
    (chain,) = read_structure(path, min_residues=10).chains
    np.testing.assert_allclose(chain.backbone, coords[:, :3], atol=1e-3)


def test_afdb_and_cath_layouts_name_chains_by_entry(tmp_path):
    text = pdb_text({"A": ["VAL"] * 30}, {"A": backbone_atoms(30)})
    write(tmp_path / "afdb" / "AF-P12345-F1-model_v4.pdb.gz", text)
    write(tmp_path / "afdb" / "notes.txt", "not a structure")
    write(tmp_path / "cath" / "dompdb" / "1oaiA00", text)
    write(tmp_path / "cath" / "dompdb" / "README", "not a domain")
    assert [p.name for p in structure_files(tmp_path / "afdb", "afdb")] == ["AF-P12345-F1-model_v4.pdb.gz"]
    assert [c.chain_id for c in read_folder(tmp_path / "afdb", "afdb", min_residues=10).chains] == ["AF-P12345-F1"]
    assert [c.chain_id for c in read_folder(tmp_path / "cath", "cath", min_residues=10).chains] == ["1oaiA00"]


def test_duplicate_chain_ids_across_files_are_an_error(tmp_path):
    text = pdb_text({"A": ["VAL"] * 30}, {"A": backbone_atoms(30)})
    write(tmp_path / "a" / "x.pdb", text)
    write(tmp_path / "b" / "x.pdb.gz", text)
    with pytest.raises(InputError, match="more than one file"):
        read_folder(tmp_path, min_residues=10)


def test_published_afdb_and_cath_fixtures_read_with_refusals_counted(tmp_path):
    """The rehearsal's fixtures (repro.fixtures.afdb / cath) through the reader: PDB and gzipped mmCIF AFDB
    models, CATH dompdb domains; the truncated AFDB file is refused whole, the CATH gap cuts a domain."""
    from repro.data.structures.build import refused_files
    from repro.data.structures.reader import read_folder, structure_files
    from repro.fixtures import afdb, cath

    (tmp_path / "afdb").mkdir()
    written = afdb.write(tmp_path / "afdb")
    result = read_folder(tmp_path / "afdb", "afdb", 30, 20)
    assert len(result.chains) == len(written) - 1 and all(c.chain_id.startswith("AF-") for c in result.chains)
    assert any(c.source_file.endswith(".cif.gz") for c in result.chains)
    summary = refused_files(structure_files(tmp_path / "afdb", "afdb"), result, 0.1, tmp_path / "afdb")
    assert summary["refused"] == 1 and summary["first_refused"][0].startswith("AF-Q005")
    cath.write(tmp_path / "cath")
    domains = read_folder(tmp_path / "cath", "cath", 20, 20)
    ids = [c.chain_id for c in domains.chains]
    assert len(ids) == 13 and sum("_s" in i for i in ids) == 2  # 12 domains, one cut at its gap


@pytest.mark.e2e
def test_replacing_one_afdb_file_reruns_exactly_the_structures_rule(tmp_path):
    from user_file_reruns import user_file_rerun

    from repro.fixtures import afdb

    def place(root):
        (root / "user/afdb").mkdir(parents=True)
        afdb.write(root / "user/afdb")

    def change(root):  # a corrected model file put in place
        path = next((root / "user/afdb").glob("AF-Q000*"))
        path.write_text(path.read_text().replace("HEADER    FIXTURE", "HEADER    FIXTURE v2"))

    overlay = {"data": {"structures": {"local": {"root": "user/afdb", "limit": 5}}}}
    scheduled, ran = user_file_rerun(tmp_path, overlay, place, ["data/structures/manifest.json"], change)
    assert ran == ["structures_data"] and scheduled == ["structures_data"]
