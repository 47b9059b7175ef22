"""The paper's metrics against direct formulas."""

import numpy as np

from repro.papers.nmrshift.metrics import pooled, set_pairs


def test_pooled_metrics_match_formulas():
    rng = np.random.default_rng(0)
    true = rng.normal(5, 2, 200)
    pred = true + rng.normal(0, 0.3, 200)
    got = pooled(pred, true)
    assert np.isclose(got["mae"], np.mean(np.abs(pred - true)))
    assert np.isclose(got["rmse"], np.sqrt(np.mean((pred - true) ** 2)))
    assert np.isclose(got["r2"], 1 - np.sum((pred - true) ** 2) / np.sum((true - true.mean()) ** 2))
    assert got["n_atoms"] == 200


def test_set_pairs_sort_each_molecule_and_keep_molecules_apart():
    p, o = set_pairs([np.array([3.0, 1.0]), np.array([9.0])], [np.array([0.5, 2.0]), np.array([8.0])])
    assert p.tolist() == [1.0, 3.0, 9.0]
    assert o.tolist() == [0.5, 2.0, 8.0]
