"""Each fields simulator against a known solution or invariant."""

import numpy as np

from repro.data.fields import simulators as sim


def grid(n: int):
    x = np.arange(n) / n
    return np.meshgrid(x, x, indexing="xy")


def test_single_fourier_mode_is_an_exact_decaying_navier_stokes_solution():
    xx, yy = grid(32)
    w0 = np.cos(2 * np.pi * (xx + 2 * yy))[None]
    out = sim.navier_stokes_2d(w0, visc=1e-3, dt=1e-2, record_every=0.5, frames=3, forcing=None)
    exact = w0 * np.exp(-1e-3 * 4 * np.pi**2 * 5 * 1.0)
    np.testing.assert_allclose(out[:, 2], exact, atol=1e-6)


def test_forced_navier_stokes_keeps_zero_mean_vorticity_and_stays_finite():
    w0 = sim.gaussian_random_field(np.random.default_rng(0), 2, 32)
    out = sim.navier_stokes_2d(w0, visc=1e-3, dt=2e-2, record_every=0.5, frames=3, forcing=sim.fno_forcing(32))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out.mean(axis=(-1, -2)), 0.0, atol=1e-10)
    assert not np.allclose(out[:, 0], out[:, -1])


def test_uniform_advection_is_an_exact_shift():
    xx, yy = grid(32)
    c0 = np.sin(2 * np.pi * xx) * np.cos(4 * np.pi * yy)
    vel = np.zeros((1, 2, 32, 32))
    vel[:, 0], vel[:, 1] = 0.3, -0.2
    out = sim.advect_periodic(c0[None], vel, dt=0.01, steps_per_frame=10, frames=2)
    exact = np.sin(2 * np.pi * (xx - 0.03)) * np.cos(4 * np.pi * (yy + 0.02))
    np.testing.assert_allclose(out[0, 1], exact, atol=1e-6)


def test_divergence_free_advection_conserves_mass_and_roughly_the_l2_norm():
    rng = np.random.default_rng(1)
    vel = sim.stream_velocity(rng, 2, 32, modes=3, amplitude=0.5)
    ky, kx = sim.wavenumbers(32)
    div = np.fft.irfft2(2j * np.pi * (kx * np.fft.rfft2(vel[:, 0]) + ky * np.fft.rfft2(vel[:, 1])), s=(32, 32))
    np.testing.assert_allclose(div, 0.0, atol=1e-10)
    xx, yy = grid(32)
    c0 = np.broadcast_to(np.exp(np.cos(2 * np.pi * xx) + np.sin(2 * np.pi * yy)), (2, 32, 32))
    out = sim.advect_periodic(c0, vel, dt=0.01, steps_per_frame=5, frames=3)
    np.testing.assert_allclose(out[:, -1].mean(axis=(1, 2)), c0.mean(axis=(1, 2)), rtol=1e-6)
    norm = np.sqrt((out**2).mean(axis=(2, 3)))
    np.testing.assert_allclose(norm[:, -1], norm[:, 0], rtol=2e-2)


def test_standing_acoustic_wave_matches_the_analytic_solution():
    xx, _ = grid(64)
    speed = np.full((1, 64, 64), 0.5)
    out = sim.acoustic_wave(np.sin(2 * np.pi * xx)[None], speed, dt=1e-3, steps_per_frame=200, frames=3)
    exact = np.sin(2 * np.pi * xx) * np.cos(0.5 * 2 * np.pi * 0.4)
    np.testing.assert_allclose(out[0, 2, 0], exact, atol=1e-3)


def test_burgers_matches_the_cole_hopf_solution():
    nu, a, n = 0.1, 0.5, 64
    x = np.arange(n) * 2 * np.pi / n

    def exact(t):
        return 2 * nu * a * np.exp(-nu * t) * np.sin(x) / (1 + a * np.exp(-nu * t) * np.cos(x))

    out = sim.burgers_1d(exact(0)[None], visc=nu, length=2 * np.pi, dt=1e-3, steps_per_frame=500, frames=3)
    np.testing.assert_allclose(out[0, 2], exact(1.0), atol=1e-8)


def test_power_law_noise_has_the_requested_spectral_slope():
    field = sim.power_law_noise(np.random.default_rng(2), 16, 64, beta=-3.0)
    power = np.abs(np.fft.rfft2(field)) ** 2
    ky, kx = sim.wavenumbers(64)
    radius = np.sqrt(kx**2 + ky**2)
    shells = np.arange(2, 20)
    mean_power = [power[:, (radius >= k - 0.5) & (radius < k + 0.5)].mean() for k in shells]
    slope = np.polyfit(np.log(shells), np.log(mean_power), 1)[0]
    assert abs(slope + 3.0) < 0.3


def test_semi_lagrangian_integer_motion_is_a_roll():
    field = np.random.default_rng(3).random((16, 16))
    motion = np.zeros((2, 16, 16))
    motion[0], motion[1] = 2.0, -1.0
    np.testing.assert_allclose(sim.semi_lagrangian(field, motion), np.roll(field, (-1, 2), axis=(0, 1)))


def test_radar_echoes_without_growth_follow_their_true_motion():
    rng = np.random.default_rng(4)
    vil, motion = sim.radar_echoes(
        rng, 3, 32, 4, beta=-3, speed=0.0, drift=1.0, cells=2, growth=0.0, log_sigma=1.5, wet_fraction=0.4
    )
    assert vil.shape == (3, 4, 32, 32) and motion.shape == (3, 2, 32, 32)
    assert vil.min() >= 0 and vil.max() <= 255 and 0.2 < np.mean(vil > 0) < 0.6
    moved = np.stack([sim.semi_lagrangian(vil[s, 0], motion[s]) for s in range(3)])
    target = np.stack([sim.semi_lagrangian(vil[s, 0], motion[s] * 0) for s in range(3)])
    assert np.abs(moved - vil[:, 1]).mean() < 0.5 * np.abs(target - vil[:, 1]).mean()
