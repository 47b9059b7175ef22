"""NMNC's estimator and manifold measurements against known answers."""

from __future__ import annotations

import numpy as np
import torch

from repro.papers.nmnc import nc


def linear_readout(width: int, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(10, width, generator=gen)
    x, t = torch.randn(3, width, generator=gen), torch.randn(3, 10, generator=gen)
    return (lambda a: 0.5 * ((a @ w.T - t.repeat(len(a) // 3, 1)) ** 2).sum(1)), x, (x @ w.T - t) @ w


def test_vnc_is_unbiased_on_a_linear_readout():
    loss, x, true = linear_readout(16)
    torch.manual_seed(0)
    est = nc.estimate_activity_gradient(loss, x, 5000, 0.01)
    assert torch.all(nc.cosine(est, true) > 0.99)


def test_nmnc_estimates_the_projected_gradient():
    loss, x, true = linear_readout(16)
    basis = nc.random_basis(16, 4)
    torch.manual_seed(1)
    est = nc.estimate_activity_gradient(loss, x, 20000, 0.01, basis)
    projected = true @ basis @ basis.T
    assert torch.all(nc.cosine(est, projected) > 0.99)
    # Every estimate lies in span(basis).
    torch.testing.assert_close(est @ basis @ basis.T, est, atol=1e-4, rtol=1e-4)


def test_subspace_measurements():
    rng = np.random.default_rng(0)
    n, k = 32, 4
    jac = rng.normal(size=(200, 10, n))
    random = nc.random_basis(n, k).double().numpy()
    assert abs(nc.captured_energy(jac, random) - k / n) < 0.03
    # Jacobians whose rows live in a k-dimensional subspace: its basis captures everything.
    basis = np.linalg.qr(rng.normal(size=(n, k)))[0]
    low = rng.normal(size=(200, 10, k)) @ basis.T
    assert nc.captured_energy(low, basis) > 1 - 1e-9
    np.testing.assert_allclose(nc.principal_cosines(low, basis), 1.0, atol=1e-9)
    # Isotropic activity has participation ratio ~ n; activity on a plane has TwoNN dimension ~ 2.
    assert nc.participation_ratio(rng.normal(size=(20000, 8))) > 7.8
    plane = rng.uniform(size=(2000, 2)) @ rng.normal(size=(2, 10))
    assert 1.8 < nc.twonn_dimension(plane) < 2.2
    pcs = nc.pca_basis(rng.normal(size=(500, 3)) * [10.0, 1.0, 0.1], 1)
    assert abs(abs(pcs[0, 0]) - 1) < 1e-2
