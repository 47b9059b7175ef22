"""WB2 metrics against independent computations."""

from __future__ import annotations

import numpy as np
import pytest

from repro.papers.mosaic.metrics import (
    EARTH_RADIUS_M,
    band_spectrum,
    crps_fair,
    crps_fair_pairwise,
    latitude_weights,
    rmse,
    spatial_mean,
    spread_skill,
    zonal_spectrum,
)


def test_fair_crps_rank_form_equals_pairwise_definition():
    rng = np.random.default_rng(0)
    ens, truth = rng.normal(size=(5, 7, 4, 6)), rng.normal(size=(5, 4, 6))
    np.testing.assert_allclose(crps_fair(ens, truth, 1), crps_fair_pairwise(ens, truth, 1), atol=1e-12)


def test_fair_crps_by_brute_force_loops_and_edge_cases():
    ens, y = np.array([0.3, -1.2, 2.0, 0.7]), 0.1
    m = ens.size
    pairs = sum(abs(a - b) for a in ens for b in ens)
    expected = np.mean(np.abs(ens - y)) - pairs / (2 * m * (m - 1))
    assert crps_fair(ens[None, :], np.array([y]), 1)[0] == pytest.approx(expected)
    assert crps_fair(ens[None, :1], np.array([y]), 1)[0] == pytest.approx(abs(ens[0] - y))  # M = 1: MAE
    rng = np.random.default_rng(1)
    for m in (2, 3, 10):
        assert np.all(crps_fair(rng.normal(size=(50, m)), rng.normal(size=50), 1) >= -1e-12)


def test_fair_crps_is_unbiased_for_the_true_distribution():
    """Averaged over many 2-member ensembles from N(0,1), fair CRPS matches the closed-form CRPS of N(0,1)."""
    rng = np.random.default_rng(2)
    y = rng.normal(size=200_000)
    ens = rng.normal(size=(200_000, 2))
    closed = np.mean(y * (2 * _phi(y) - 1) + 2 * _pdf(y) - 1 / np.sqrt(np.pi))
    assert crps_fair(ens, y, 1).mean() == pytest.approx(closed, abs=0.01)


def _pdf(x):
    return np.exp(-(x**2) / 2) / np.sqrt(2 * np.pi)


def _phi(x):
    from scipy.special import ndtr

    return ndtr(x)


def test_latitude_weights_are_cell_areas():
    lat = np.linspace(-90, 90, 121)
    w = latitude_weights(lat)
    assert w.mean() == pytest.approx(1.0)
    np.testing.assert_allclose(w, w[::-1])
    # cell areas of a 1.5 degree grid with poles: polar caps of half-height, areas by spherical zones
    edges = np.deg2rad(np.concatenate([[-90], np.arange(-89.25, 90, 1.5), [90]]))
    areas = 2 * np.pi * (np.sin(edges[1:]) - np.sin(edges[:-1]))
    np.testing.assert_allclose(w, areas / areas.mean(), rtol=1e-12)
    assert w[0] > 0  # cos(latitude) would give the poles zero weight
    np.testing.assert_allclose(latitude_weights(lat[::-1]), w[::-1])
    assert spatial_mean(np.full((121, 240), 3.5), lat) == pytest.approx(3.5)


def test_rmse_takes_the_square_root_after_time_averaging():
    lat = np.array([-45.0, 45.0])
    f = np.zeros((2, 2, 3))
    y = np.stack([np.ones((2, 3)), 3 * np.ones((2, 3))])
    assert rmse(f, y, lat) == pytest.approx(np.sqrt((1 + 9) / 2))


def test_ensemble_mean_rmse_below_member_rmse_and_spread_skill():
    rng = np.random.default_rng(3)
    lat = np.linspace(-80, 80, 9)
    truth = rng.normal(size=(40, 9, 12))
    ens = truth[:, None] + rng.normal(size=(40, 6, 9, 12))
    mean_rmse = rmse(ens.mean(1), truth, lat)
    assert mean_rmse <= np.mean([rmse(ens[:, m], truth, lat) for m in range(6)])
    # members and truth exchangeable draws around a common centre: spread/skill ~ sqrt((M+1)/M)^-1 ~ 1
    centre = rng.normal(size=(400, 9, 12))
    ens = centre[:, None] + rng.normal(size=(400, 6, 9, 12))
    truth = centre + rng.normal(size=(400, 9, 12))
    assert spread_skill(ens, truth, lat) * np.sqrt(7 / 6) == pytest.approx(1.0, abs=0.03)


def test_zonal_wave_spectrum_peaks_at_its_wavenumber_with_its_energy():
    lat = np.array([0.0, 45.0])
    lon = np.arange(64) * 360 / 64
    amplitude, k0 = 3.0, 5
    field = amplitude * np.cos(np.deg2rad(lon) * k0 + 0.4)[None, :] * np.ones((2, 1))
    spectrum, k = zonal_spectrum(field, lat)
    assert np.argmax(spectrum[1]) == k0
    circumference = 2 * np.pi * EARTH_RADIUS_M * np.cos(np.deg2rad(lat))
    # energy of a cosine: mean square amplitude^2 / 2 times the circumference
    np.testing.assert_allclose(spectrum[:, k0], circumference * amplitude**2 / 2, rtol=1e-12)
    assert spectrum[:, np.arange(k.size) != k0].max() < 1e-20 * spectrum.max()


@pytest.mark.parametrize("n_lon", [63, 64])
def test_zonal_parseval(n_lon):
    rng = np.random.default_rng(4)
    lat = np.array([-30.0, 10.0, 60.0])
    field = rng.normal(size=(3, n_lon))
    spectrum, _ = zonal_spectrum(field, lat)
    circumference = 2 * np.pi * EARTH_RADIUS_M * np.cos(np.deg2rad(lat))
    np.testing.assert_allclose(spectrum.sum(-1), circumference * (field**2).mean(-1), rtol=1e-12)


def test_band_spectrum_uses_both_hemispheres_and_mean_wavelength():
    lat = np.array([-50.0, -20.0, 20.0, 50.0])
    field = np.zeros((4, 32))
    field[0] = np.cos(np.arange(32) * 2 * np.pi * 3 / 32)
    spectrum, wavelength = band_spectrum(field, lat, (30, 60))
    assert np.argmax(spectrum) == 3
    assert wavelength[1] == pytest.approx(2 * np.pi * EARTH_RADIUS_M * np.cos(np.deg2rad(50)) / 1000)
