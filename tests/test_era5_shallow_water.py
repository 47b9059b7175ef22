"""The embedded generator: spectral transforms, a steady analytic flow, conservation, canonical output."""

from __future__ import annotations

import numpy as np
import pytest

from repro.data.era5.shallow_water import (
    EARTH_RADIUS,
    GRAVITY,
    OMEGA,
    ShallowWater,
    ShallowWaterSettings,
    SphericalGrid,
    simulate,
)


def test_spectral_round_trip_and_legendre_orthonormality():
    grid = SphericalGrid(16)
    rng = np.random.default_rng(0)
    coeffs = (rng.normal(size=grid.mask.shape) + 1j * rng.normal(size=grid.mask.shape)) * grid.mask
    coeffs[0] = coeffs[0].real
    np.testing.assert_allclose(grid.analyse(grid.synthesise(coeffs)), coeffs, atol=1e-12)
    gram = np.einsum("nj,kj,j->nk", grid.p[3, 3:], grid.p[3, 3:], grid.weights)
    np.testing.assert_allclose(gram, np.eye(gram.shape[0]), atol=1e-12)


def test_solid_body_rotation_is_steady():
    """Williamson et al. (1992) test 2: zonal flow u0 cos(lat) in geostrophic balance does not change."""
    settings = ShallowWaterSettings(nlat=16, forcing_amplitude=0.0, drag_days=1e12, diffusion_hours=1e12)
    model = ShallowWater(settings, seed=0)
    u0, mu = 20.0, model.grid.mu[:, None] * np.ones((1, model.grid.nlon))
    model.vort = model.grid.analyse(2 * u0 / EARTH_RADIUS * mu)
    model.div = np.zeros_like(model.vort)
    model.phi = model.grid.analyse(-(EARTH_RADIUS * OMEGA * u0 + u0**2 / 2) * mu**2)
    before = model.fields()
    for _ in range(48):
        model.step()
    after = model.fields()
    lat = np.deg2rad(model.grid.latitude)[:, None]
    np.testing.assert_allclose(before["u_component_of_wind"], u0 * np.cos(lat) * np.ones((1, 32)), atol=1e-9)
    for name in before:
        scale = np.abs(before[name]).max()
        assert np.abs(after[name] - before[name]).max() < 1e-8 * max(scale, u0), name


def test_forced_run_conserves_mass_and_is_canonical():
    ds = simulate(ShallowWaterSettings(nlat=16, spinup_days=1), seed=3, n_steps=6)
    assert ds.geopotential.dims == ("time", "level", "latitude", "longitude")
    assert np.all(np.diff(ds.latitude) > 0) and ds.longitude.min() == 0 and ds.longitude.max() < 360
    assert ds.geopotential.dtype == np.float32
    weights = np.polynomial.legendre.leggauss(16)[1]
    mean_phi = (ds.geopotential.values[:, 0].astype(np.float64).mean(-1) * weights).sum(-1) / 2
    np.testing.assert_allclose(mean_phi, GRAVITY * 8000.0, rtol=1e-6)
    assert 1 < float(ds.u_component_of_wind.std()) < 60


def test_seed_reproducible_and_distinct():
    a = simulate(ShallowWaterSettings(nlat=16, spinup_days=0.5), seed=1, n_steps=2)
    b = simulate(ShallowWaterSettings(nlat=16, spinup_days=0.5), seed=1, n_steps=2)
    c = simulate(ShallowWaterSettings(nlat=16, spinup_days=0.5), seed=2, n_steps=2)
    np.testing.assert_array_equal(a.geopotential.values, b.geopotential.values)
    assert not np.allclose(a.geopotential.values, c.geopotential.values)


@pytest.mark.parametrize("nlat", [16, 32])
def test_truncation_is_alias_free(nlat):
    grid = SphericalGrid(nlat)
    assert 3 * grid.truncation + 1 <= grid.nlon
