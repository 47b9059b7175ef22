"""The AFDB fixture of the rehearsal is read by the structures source's afdb reader and windowed by geocoupling."""

import numpy as np

from repro.data.structures.reader import read_folder
from repro.fixtures import afdb
from repro.papers.geocoupling.windows import windows


def test_afdb_fixture_reads_as_chains_and_gives_windows(tmp_path):
    files = afdb.write(tmp_path)
    assert all(f.name.startswith("AF-") and "-model_v4." in f.name for f in files)
    result = read_folder(tmp_path, "afdb", min_residues=30)
    assert [s["item"] for s in result.skipped] == [str(files[5])]  # the fixture's one truncated file
    assert len(result.chains) == len(files) - 1
    chain = result.chains[0]
    assert chain.chain_id == files[0].name.removesuffix("-model_v4.pdb") and set(chain.dssp) <= set("HEC")
    assert "H" in chain.dssp and chain.backbone.shape == (len(chain.sequence), 3, 3)
    for c in result.chains:
        c.split = "train"
    seq, bb, _ = windows(result.chains, "train", 16, 4)
    assert len(seq) > 100 and np.isfinite(bb).all()
