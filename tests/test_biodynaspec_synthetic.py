"""ANM reference dynamics: exact covariance, stationarity, and the two samplers."""

from __future__ import annotations

import numpy as np

from repro.papers.biodynaspec.synthetic import ANM, anm_hessian, iid_sampler, spectral_sampler


def _chain(n=20, seed=0):
    """A compact random cloud (every atom has several neighbours within the 10 Å cut-off)."""
    return np.random.default_rng(seed).uniform(0, 12, size=(n, 3))


def test_hessian_has_six_rigid_modes_and_covariance_is_its_pseudo_inverse():
    ca = _chain()
    h = anm_hessian(ca)
    values = np.linalg.eigvalsh(h)
    assert np.sum(np.abs(values) < 1e-8 * values.max()) == 6 and values.min() > -1e-8
    anm = ANM(ca)
    np.testing.assert_allclose(anm.covariance(), anm.kt * np.linalg.pinv(h, rcond=1e-8, hermitian=True), atol=1e-8)


def test_trajectory_has_the_stationary_covariance_and_set_rmsf():
    anm = ANM(_chain(), rmsf=0.8)
    x = np.concatenate([anm.trajectory(4000, np.random.default_rng(s)) for s in range(3)])
    flucts = ((x - anm.mean) ** 2).sum(-1).mean()
    assert abs(flucts - 0.8**2) / 0.8**2 < 0.1
    sample = np.cov(x.reshape(len(x), -1), rowvar=False)
    assert np.linalg.norm(sample - anm.covariance()) / np.linalg.norm(anm.covariance()) < 0.15


def test_samplers_match_the_training_ensemble_shape_and_spread():
    anm = ANM(_chain())
    train = anm.trajectory(2000, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    spec, iid = spectral_sampler(train, 16, 800, rng), iid_sampler(train, 800, rng)
    assert spec.shape == iid.shape == (800, 20, 3)
    for gen in (spec, iid):
        ratio = gen.std(0).mean() / train.std(0).mean()
        assert 0.8 < ratio < 1.2

    def lag1(x):
        flat = (x - x.mean(0)).reshape(len(x), -1)
        return float((flat[:-1] * flat[1:]).sum() / (flat**2).sum())

    assert lag1(train) > 0.2
    assert lag1(spec) > 0.5 * lag1(train) and abs(lag1(iid)) < 0.1
