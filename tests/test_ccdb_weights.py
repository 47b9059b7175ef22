"""CCDB's balancing weights: the closed-form Gaussian W2 against scipy, and the weights undo a planted bias."""

from __future__ import annotations

import numpy as np
import torch
from scipy import linalg

from repro.papers.ccdb.weights import balance_weights, gaussian_w2, weighted_gaussian

# A small entropy weight: the test checks the balancing term, which then dominates the objective.
SETTINGS = {"eps": 1e-3, "alpha": 10.0, "beta": 0.01, "lr": 0.1, "steps": 300}


def test_w2_matches_the_scipy_formula():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 4, 4))
    s1, s2 = a @ a.T + 0.1 * np.eye(4), b @ b.T + 0.1 * np.eye(4)
    m1, m2 = rng.normal(size=(2, 4))
    root = linalg.sqrtm(s2)
    expected = np.sum((m1 - m2) ** 2) + np.trace(s1 + s2 - 2 * linalg.sqrtm(root @ s1 @ root)).real
    got = gaussian_w2(*(torch.as_tensor(v) for v in (m1, s1, m2, s2)))
    assert abs(float(got) - expected) < 1e-8
    assert abs(float(gaussian_w2(*(torch.as_tensor(v) for v in (m1, s1, m1, s1))))) < 1e-6


def test_weighted_gaussian_with_integer_weights_repeats_rows():
    rng = np.random.default_rng(1)
    b = rng.normal(size=(5, 2))
    w = np.array([1, 2, 1, 3, 1.0])
    mu, cov = weighted_gaussian(torch.as_tensor(b), torch.as_tensor(w), 0.0)
    rep = np.repeat(b, w.astype(int), axis=0)
    np.testing.assert_allclose(mu.numpy(), rep.mean(0))
    np.testing.assert_allclose(cov.numpy(), np.cov(rep.T, bias=True))


def test_weights_upweight_the_minority_of_a_planted_bias():
    """Two classes, a bias feature equal to the class for 90% of samples: weights must lift the other 10%."""
    rng = np.random.default_rng(2)
    n = 200
    y = np.arange(n) % 2
    aligned = rng.random(n) < 0.9
    bias = np.where(aligned, y, 1 - y)
    b = np.c_[bias + 0.1 * rng.normal(size=n), rng.normal(size=n)]
    w, path = balance_weights(b, y, 2, SETTINGS, seed=0)
    w = w.numpy()
    assert w.min() > 0 and abs(w.mean() - 1) < 1e-5
    assert w[~aligned].mean() > 3 * w[aligned].mean()
    assert path[-1] < path[0]
    # Weighted, the bias feature's class-conditional means nearly agree.
    means = [np.average(b[y == c, 0], weights=w[y == c]) for c in (0, 1)]
    assert abs(means[0] - means[1]) < 0.2
