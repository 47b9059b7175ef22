"""The NMRShiftDB2 SD reader takes every spectrum of a record, each with its own solvent.

Layout of ``nmrshiftdb2withsignals.sd``: the number after the nucleus is the spectrum's index within the
record (``Spectrum 13C 0``, ``Spectrum 1H 1``, ``Spectrum 13C 2``) and ``Solvent`` holds one
``<i>:<name>`` line per spectrum index.
"""

import numpy as np
import pytest
from rdkit import Chem

from repro.data.spectra import process
from repro.data.spectra.molecules import ConformerCache
from repro.data.spectra.sdf import spectrum_fields, spectrum_solvents, write_sdf

SETTINGS = {"atom_index_base": 0}
# Ethanol with explicit H: atom 0 = CH3 carbon, 1 = CH2 carbon, 2 = O; H atoms 3-5 on C0, 6-7 on C1, 8 on O.
ETHANOL = Chem.AddHs(Chem.MolFromSmiles("CCO"))
SOLVENTS = "0:Chloroform-D1 (CDCl3)\n1:Chloroform-D1 (CDCl3)\n2:DMSO-d6\n3:Chloroform-D1 (CDCl3)"


@pytest.fixture
def sd_file(tmp_path):
    entries = [
        (
            ETHANOL,
            {
                "nmrshiftdb2 ID": "10",
                "Solvent": SOLVENTS,
                "Spectrum 13C 0": "18.0;0.0Q;0|58.0;0.0T;1|",
                "Spectrum 1H 1": "1.22;0.0T;3|3.69;0.0Q;6|",
                "Spectrum 13C 2": "18.9;0.0Q;0|57.1;0.0T;1|",
                "Spectrum 13C 3": "18.4;0.0Q;0|58.6;0.0T;1|",
            },
        ),
        (
            ETHANOL,
            {
                "nmrshiftdb2 ID": "11",
                "Solvent": "0:Chloroform-D1 (CDCl3)\n1:DMSO-d6",
                "Spectrum 13C 0": "18.2;0.0Q;0|58.2;0.0T;1|",
                "Spectrum 13C 1": "eighteen;0.0Q;0|",
            },
        ),
    ]
    path = tmp_path / "nmrshiftdb2withsignals.sd"
    write_sdf(path, entries)
    return path


def read(path, nucleus, tmp_path):
    log = process.RejectionLog()
    rows = list(process.labelled_rows(path, nucleus, SETTINGS, ConformerCache(tmp_path / "conformers"), log))
    return {r["mol_id"]: r for r in rows}, log


def test_fields_and_solvents_are_read_by_spectrum_index():
    props = {"Spectrum 13C 2": "b", "Spectrum 1H 1": "h", "Spectrum 13C 0": "a", "Solvent": SOLVENTS}
    assert spectrum_fields(props, "13C") == [(0, "a"), (2, "b")]
    assert spectrum_fields(props, "1H") == [(1, "h")]
    default, by_index = spectrum_solvents(SOLVENTS)
    assert default == "" and by_index[2] == "DMSO-d6" and by_index[0] == "Chloroform-D1 (CDCl3)"
    assert spectrum_solvents("CDCl3") == ("CDCl3", {})


def test_every_spectrum_kept_with_its_own_solvent_and_combined_per_solvent(sd_file, tmp_path):
    rows, _ = read(sd_file, "13C", tmp_path)
    cdcl3, dmso = rows["10@Chloroform-D1 (CDCl3)"], rows["10@DMSO-d6"]
    assert (cdcl3["solvent_group"], dmso["solvent_group"]) == ("CDCl3", "DMSO-d6")
    # spectra 0 and 3 are both in CDCl3: per-atom median (two values: their mean)
    np.testing.assert_allclose(np.sort(cdcl3["observed"]), [18.2, 58.3], rtol=1e-6)
    np.testing.assert_allclose(np.sort(dmso["observed"]), [18.9, 57.1], rtol=1e-6)


def test_proton_spectrum_at_index_one_gets_the_solvent_of_line_one(sd_file, tmp_path):
    rows, _ = read(sd_file, "1H", tmp_path)
    (row,) = rows.values()
    assert row["mol_id"] == "10" and row["solvent_group"] == "CDCl3"
    np.testing.assert_allclose(np.unique(row["observed"]), [1.22, 3.69], rtol=1e-6)


def test_unparsable_extra_spectrum_rejected_with_its_reason_and_the_rest_kept(sd_file, tmp_path):
    rows, log = read(sd_file, "13C", tmp_path)
    assert log.counts["labelled/13C"]["unparsable_text"] == 1
    (example,) = log.examples["labelled/13C/unparsable_text"]
    assert "#1 spectrum 1" in example
    np.testing.assert_allclose(np.sort(rows["11"]["observed"]), [18.2, 58.2], rtol=1e-6)
