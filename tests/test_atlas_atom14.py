"""atom14 naming: force-field aliases map onto the standard slots."""

from __future__ import annotations

import numpy as np

from repro.data.atlas.atom14 import ATOM14, atom14_index, atom14_slot, gather_atom14, standard_residue


def test_table_shape_and_backbone_first():
    assert len(ATOM14) == 20 and max(len(v) for v in ATOM14.values()) == 14
    assert all(v[:4] == ("N", "CA", "C", "O") for v in ATOM14.values())


def test_force_field_aliases():
    assert [standard_residue(n) for n in ("HSD", "HSE", "HIE", "CYX", "MSE", "HOH")] == [
        "HIS",
        "HIS",
        "HIS",
        "CYS",
        "MET",
        None,
    ]
    assert atom14_slot("ILE", "CD") == atom14_slot("ILE", "CD1") == 7
    assert atom14_slot("GLY", "OT1") == 3 and atom14_slot("GLY", "OXT") is None


def test_gather_puts_nan_in_missing_slots():
    index = atom14_index([("GLY", [(0, "N"), (1, "CA"), (2, "C"), (3, "O")]), ("ALA", [(4, "CA"), (5, "CB")])])
    xyz = np.arange(2 * 6 * 3, dtype=float).reshape(2, 6, 3)
    out = gather_atom14(xyz, index)
    assert out.shape == (2, 2, 14, 3)
    np.testing.assert_array_equal(out[:, 1, 1], xyz[:, 4])
    np.testing.assert_array_equal(out[:, 1, 4], xyz[:, 5])
    assert np.isnan(out[:, 1, 0]).all() and np.isnan(out[:, 0, 4:]).all()
