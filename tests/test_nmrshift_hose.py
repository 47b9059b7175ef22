"""HOSE-like lookup: an atom whose largest-radius environment is unique in training gets its own shift back."""

from collections import Counter

import numpy as np
import pytest
from test_nmrshift_pipeline import spectra  # noqa: F401  (module-scoped fixture)

from repro.papers.nmrshift.hose import EnvironmentLookup, _codes
from repro.papers.nmrshift.records import load_records


@pytest.mark.parametrize("nucleus", ["1H", "13C"])
def test_lookup_recovers_unique_environments_and_averages_shared_ones(spectra, nucleus):  # noqa: F811
    records = load_records(spectra.labelled, nucleus)
    lookup = EnvironmentLookup(records)
    top, every = [], []
    for i in range(len(records)):
        codes = _codes(records, i)
        for atom in np.flatnonzero(records.mask[i]):
            value = float(records.target[i, atom])
            every += [((r, int(c)), value) for r, c in enumerate(codes[atom]) if c >= 0]
            radius = max(r for r in range(codes.shape[1]) if codes[atom, r] >= 0)
            top.append(((radius, int(codes[atom, radius])), value))
    counts = Counter(key for key, _ in every)
    preds = np.concatenate(lookup.predict(records))
    unique = [k for k, (key, _) in enumerate(top) if counts[key] == 1]
    assert unique, "no unique environment to check"
    np.testing.assert_allclose(preds[unique], [top[k][1] for k in unique], rtol=1e-6)
    for k, (key, _) in enumerate(top):
        shared = [value for other, value in every if other == key]
        assert preds[k] == pytest.approx(np.mean(shared), rel=1e-5)
