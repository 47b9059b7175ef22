"""NMRShiftDB2 spectrum fields: parsing, index base, and 1H assignments on H atoms or on carriers."""

import pytest
from rdkit import Chem

from repro.data.spectra.molecules import Rejected
from repro.data.spectra.sdf import carbon_assignments, check_sdf, parse_spectrum_field, proton_assignments
from repro.workflow.io import InputError


def test_parse_field_and_index_base():
    field = "17.6;0.0Q;1|22.4;0.0T;2|"
    assert parse_spectrum_field(field, 0) == [(17.6, 1), (22.4, 2)]
    assert parse_spectrum_field(field, 1) == [(17.6, 0), (22.4, 1)]
    with pytest.raises(Rejected):
        parse_spectrum_field("17.6;0.0Q|")


def test_carbon_assignment_must_point_at_a_carbon():
    mol = Chem.AddHs(Chem.MolFromSmiles("CCO"))
    assert carbon_assignments(mol, [(18.0, 0), (58.0, 1)]) == {0: 18.0, 1: 58.0}
    with pytest.raises(Rejected) as err:
        carbon_assignments(mol, [(50.0, 2)])
    assert err.value.reason == "bad_assignment"


def test_proton_assignment_on_h_atom_or_carrier_resolves_to_carrier():
    mol = Chem.AddHs(Chem.MolFromSmiles("CCO"))
    h_on_c0 = [a.GetIdx() for a in mol.GetAtomWithIdx(0).GetNeighbors() if a.GetSymbol() == "H"]
    by_h = proton_assignments(mol, [(1.2, i) for i in h_on_c0])
    by_carrier = proton_assignments(mol, [(1.2, 0)])
    assert by_h == by_carrier == {0: [1.2]}


def test_html_page_is_not_an_sd_file(tmp_path):
    page = tmp_path / "nmrshiftdb2withsignals.sd"
    page.write_text("<!DOCTYPE html><html><body>Download</body></html>")
    with pytest.raises(InputError, match="HTML page"):
        check_sdf(page)
