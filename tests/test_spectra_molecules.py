"""The paper's molecule filters, symmetry classes, canonical atom order and the conformer cache."""

import numpy as np
import pytest
from rdkit import Chem

from repro.data.spectra.molecules import (
    ConformerCache,
    Rejected,
    canonical_with_hydrogens,
    filtered_molecule,
    symmetry_classes,
)


@pytest.mark.parametrize(
    ("smiles", "reason"),
    [
        ("C1CC(", "bad_smiles"),
        ("CC.O", "bad_smiles"),
        ("*CC", "bad_smiles"),
        ("c1cc1", "bad_smiles"),
        ("[CH3]", "radical"),
        ("C[13CH3]", "isotope"),
        ("CCBr", "element"),
        ("C" * 30, "size"),
        ("CC(F)C(Cl)C(O)C", "chirality"),
    ],
)
def test_filters_name_the_failing_rule(smiles, reason):
    with pytest.raises(Rejected) as err:
        filtered_molecule(smiles)
    assert err.value.reason == reason


def test_good_molecule_passes_with_one_stereocentre():
    assert filtered_molecule("CC(O)CC").GetNumAtoms() == 5


def test_symmetry_classes_of_toluene_carbons():
    classes = symmetry_classes(Chem.MolFromSmiles("Cc1ccccc1"))
    assert len(set(classes)) == 5
    assert classes[2] == classes[6] and classes[3] == classes[5]


def test_canonical_order_is_the_same_for_any_input_order():
    a = canonical_with_hydrogens(Chem.AddHs(Chem.MolFromSmiles("OCc1ccccc1")))
    b = canonical_with_hydrogens(Chem.AddHs(Chem.MolFromSmiles("c1ccc(CO)cc1")))
    assert a[0] == b[0]
    assert [x.GetAtomicNum() for x in a[1].GetAtoms()] == [x.GetAtomicNum() for x in b[1].GetAtoms()]
    source = Chem.MolFromSmiles("c1ccc(CO)cc1")
    assert [source.GetAtomWithIdx(i).GetSymbol() for i in b[2]] == [
        x.GetSymbol() for x in b[1].GetAtoms() if x.GetAtomicNum() > 1
    ]


def test_conformer_cache_stores_once(tmp_path):
    smiles, canon, _ = canonical_with_hydrogens(Chem.MolFromSmiles("CCO"))
    cache = ConformerCache(tmp_path)
    first = cache.coordinates(smiles, canon)
    second = ConformerCache(tmp_path)
    np.testing.assert_array_equal(second.coordinates(smiles, canon), first)
    assert (cache.misses, second.hits, second.misses) == (1, 1, 0)
    d = np.linalg.norm(first[0] - first[1])
    assert 1.4 < d < 1.6
