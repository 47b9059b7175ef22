"""Simulators the workflow runs where no registry package ships the fields (numpy, batched over samples).

Each one is verified in tests/test_fields_simulators.py against a known solution or invariant:
- ``navier_stokes_2d``: vorticity form on the unit torus, pseudo-spectral with 2/3 dealiasing,
  Crank-Nicolson diffusion and a Heun step for the nonlinear term, with the FNO protocol's forcing
  0.1 (sin 2pi(x+y) + cos 2pi(x+y)) and initial vorticity from N(0, 7^1.5 (-Delta + 49 I)^-2.5)
  (a single Fourier mode is an exact decaying solution of the unforced equation);
- ``advect_periodic``: passive scalar transported by a stationary divergence-free velocity, spectral
  derivatives and RK4 (uniform velocity: an exact Fourier shift);
- ``acoustic_wave``: p_tt = c(x)^2 Laplace(p), leapfrog, 5-point Laplacian, periodic (standing wave);
- ``burgers_1d``: u_t + u u_x = nu u_xx, periodic, pseudo-spectral, Crank-Nicolson + Heun (Cole-Hopf);
- ``radar_echoes``: log-normal rain with a power-law spectrum, advected semi-Lagrangian by a smooth
  divergence-free flow with growing and decaying cells; the true motion is returned.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage


def wavenumbers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer wavenumbers (ky, kx) of an n x n grid for rfft2 layout: ky full, kx half."""
    ky = np.fft.fftfreq(n, 1.0 / n)[:, None]
    kx = np.fft.rfftfreq(n, 1.0 / n)[None, :]
    return ky, kx


def dealias_mask(n: int) -> np.ndarray:
    ky, kx = wavenumbers(n)
    cut = n / 3.0
    return (np.abs(ky) <= cut) & (np.abs(kx) <= cut)


def gaussian_random_field(rng: np.random.Generator, samples: int, n: int, alpha: float = 2.5, tau: float = 7.0):
    """FNO's GaussianRF on the unit torus: N(0, tau^(2 alpha - 2) (-4pi^2 Laplace + tau^2)^-alpha), zero mean."""
    ky = np.fft.fftfreq(n, 1.0 / n)[:, None]
    kx = np.fft.fftfreq(n, 1.0 / n)[None, :]
    sigma = tau ** (0.5 * (2 * alpha - 2))
    sqrt_eig = n * n * np.sqrt(2.0) * sigma * (4 * np.pi**2 * (kx**2 + ky**2) + tau**2) ** (-alpha / 2)
    sqrt_eig[0, 0] = 0.0
    xi = rng.standard_normal((samples, n, n)) + 1j * rng.standard_normal((samples, n, n))
    return np.fft.ifft2(sqrt_eig * xi).real


def fno_forcing(n: int) -> np.ndarray:
    x = np.arange(n) / n
    xx, yy = np.meshgrid(x, x, indexing="xy")
    return 0.1 * (np.sin(2 * np.pi * (xx + yy)) + np.cos(2 * np.pi * (xx + yy)))


def navier_stokes_2d(
    w0: np.ndarray, *, visc: float, dt: float, record_every: float, frames: int, forcing: np.ndarray | None
) -> np.ndarray:
    """Vorticity (sample, frame, y, x) at t = 0, record_every, ..., for initial vorticity w0 (sample, y, x)."""
    n = w0.shape[-1]
    ky, kx = wavenumbers(n)
    lap = 4 * np.pi**2 * (kx**2 + ky**2)
    lap_inv = np.where(lap == 0, 0.0, 1.0 / np.where(lap == 0, 1.0, lap))
    mask = dealias_mask(n)
    f_h = np.fft.rfft2(forcing) if forcing is not None else 0.0
    steps = int(round(record_every / dt))
    if not np.isclose(steps * dt, record_every):
        raise ValueError(f"record_every {record_every} is not a multiple of dt {dt}")

    def nonlinear(w_h: np.ndarray) -> np.ndarray:
        psi_h = w_h * lap_inv
        u = np.fft.irfft2(2j * np.pi * ky * psi_h, s=(n, n))
        v = np.fft.irfft2(-2j * np.pi * kx * psi_h, s=(n, n))
        wx = np.fft.irfft2(2j * np.pi * kx * w_h, s=(n, n))
        wy = np.fft.irfft2(2j * np.pi * ky * w_h, s=(n, n))
        return mask * np.fft.rfft2(u * wx + v * wy)

    implicit = 1.0 + 0.5 * dt * visc * lap
    explicit = 1.0 - 0.5 * dt * visc * lap
    w_h = np.fft.rfft2(w0)
    out = [w0.copy()]
    for _ in range(frames - 1):
        for _ in range(steps):
            n0 = nonlinear(w_h)
            guess = (explicit * w_h + dt * (f_h - n0)) / implicit
            w_h = (explicit * w_h + dt * (f_h - 0.5 * (n0 + nonlinear(guess)))) / implicit
        out.append(np.fft.irfft2(w_h, s=(n, n)))
    return np.stack(out, axis=1)


def stream_velocity(rng: np.random.Generator, samples: int, n: int, modes: int, amplitude: float) -> np.ndarray:
    """A smooth divergence-free velocity (sample, 2, y, x) = curl of a random low-mode stream function.

    Scaled so the root-mean-square speed equals ``amplitude`` (domain lengths per unit time).
    """
    x = np.arange(n) / n
    xx, yy = np.meshgrid(x, x, indexing="xy")
    psi = np.zeros((samples, n, n))
    for _ in range(modes):
        k = rng.integers(1, 3, size=(samples, 2)) * rng.choice([-1, 1], size=(samples, 2))
        phase = rng.uniform(0, 2 * np.pi, size=samples)
        psi += np.sin(2 * np.pi * (k[:, :1, None] * xx + k[:, 1:, None] * yy) + phase[:, None, None])
    psi_h = np.fft.rfft2(psi)
    ky, kx = wavenumbers(n)
    u = np.fft.irfft2(2j * np.pi * ky * psi_h, s=(n, n))
    v = np.fft.irfft2(-2j * np.pi * kx * psi_h, s=(n, n))
    vel = np.stack([u, v], axis=1)
    rms = np.sqrt(np.mean(vel**2, axis=(1, 2, 3), keepdims=True))
    return amplitude * vel / np.maximum(rms, 1e-12)


def advect_periodic(c0: np.ndarray, velocity: np.ndarray, *, dt: float, steps_per_frame: int, frames: int):
    """Scalar c (sample, frame, y, x) transported by the stationary velocity (sample, 2, y, x) on the unit torus."""
    n = c0.shape[-1]
    ky, kx = wavenumbers(n)
    mask = dealias_mask(n)
    u, v = velocity[:, 0], velocity[:, 1]

    def rhs(c: np.ndarray) -> np.ndarray:
        c_h = np.fft.rfft2(c) * mask
        cx = np.fft.irfft2(2j * np.pi * kx * c_h, s=(n, n))
        cy = np.fft.irfft2(2j * np.pi * ky * c_h, s=(n, n))
        return -(u * cx + v * cy)

    c = c0.copy()
    out = [c.copy()]
    for _ in range(frames - 1):
        for _ in range(steps_per_frame):
            k1 = rhs(c)
            k2 = rhs(c + 0.5 * dt * k1)
            k3 = rhs(c + 0.5 * dt * k2)
            k4 = rhs(c + dt * k3)
            c = c + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(c.copy())
    return np.stack(out, axis=1)


def periodic_laplacian(p: np.ndarray, dx: float) -> np.ndarray:
    return (np.roll(p, 1, -1) + np.roll(p, -1, -1) + np.roll(p, 1, -2) + np.roll(p, -1, -2) - 4 * p) / dx**2


def acoustic_wave(
    p0: np.ndarray, speed: np.ndarray, *, dt: float, steps_per_frame: int, frames: int, v0: np.ndarray | None = None
) -> np.ndarray:
    """Pressure and its rate (sample, frame, 2, y, x) of p_tt = c^2 Laplace(p) on the unit torus.

    Leapfrog in time (second order), started from p(-dt) by a Taylor expansion with initial rate ``v0``.
    Frame k holds p at t = k * steps_per_frame * dt and (for k >= 1) the backward difference
    (p_n - p_(n-1)) / dt, the rate half a step earlier.
    """
    n = p0.shape[-1]
    dx = 1.0 / n
    c2 = speed**2
    v0 = np.zeros_like(p0) if v0 is None else v0
    prev = p0 - dt * v0 + 0.5 * dt**2 * c2 * periodic_laplacian(p0, dx)
    cur = p0
    out = [np.stack([p0, v0], axis=1)]
    for _ in range(frames - 1):
        for _ in range(steps_per_frame):
            nxt = 2 * cur - prev + dt**2 * c2 * periodic_laplacian(cur, dx)
            prev, cur = cur, nxt
        out.append(np.stack([cur, (cur - prev) / dt], axis=1))
    return np.stack(out, axis=1)


def burgers_1d(u0: np.ndarray, *, visc: float, length: float, dt: float, steps_per_frame: int, frames: int):
    """Viscous Burgers u (sample, frame, x) on a periodic interval, pseudo-spectral, CN diffusion + Heun."""
    n = u0.shape[-1]
    k = 2 * np.pi / length * np.fft.rfftfreq(n, 1.0 / n)
    mask = np.abs(np.fft.rfftfreq(n, 1.0 / n)) <= n / 3.0
    implicit = 1.0 + 0.5 * dt * visc * k**2
    explicit = 1.0 - 0.5 * dt * visc * k**2

    def nonlinear(u_h: np.ndarray) -> np.ndarray:
        u = np.fft.irfft(u_h * mask, n=n)
        return 0.5j * k * np.fft.rfft(u * u) * mask

    u_h = np.fft.rfft(u0)
    out = [u0.copy()]
    for _ in range(frames - 1):
        for _ in range(steps_per_frame):
            n0 = nonlinear(u_h)
            guess = (explicit * u_h - dt * n0) / implicit
            u_h = (explicit * u_h - 0.5 * dt * (n0 + nonlinear(guess))) / implicit
        out.append(np.fft.irfft(u_h, n=n))
    return np.stack(out, axis=1)


def power_law_noise(rng: np.random.Generator, samples: int, n: int, beta: float) -> np.ndarray:
    """Gaussian noise whose power spectrum falls as |k|^beta (beta ~ -3 for rain, as pysteps uses), unit std."""
    ky = np.fft.fftfreq(n, 1.0 / n)[:, None]
    kx = np.fft.rfftfreq(n, 1.0 / n)[None, :]
    radius = np.sqrt(kx**2 + ky**2)
    amplitude = np.where(radius > 0, np.maximum(radius, 1.0) ** (beta / 2), 0.0)
    white = np.fft.rfft2(rng.standard_normal((samples, n, n)))
    field = np.fft.irfft2(white * amplitude, s=(n, n))
    return (field - field.mean(axis=(1, 2), keepdims=True)) / field.std(axis=(1, 2), keepdims=True)


def semi_lagrangian(field: np.ndarray, motion: np.ndarray, steps: float = 1.0, periodic: bool = True) -> np.ndarray:
    """x(r, t + steps) = x(r - steps * V(r), t): bilinear backtracking on a periodic grid (``periodic=False``:
    a point traced back outside the grid takes the nearest edge value).

    ``field`` (y, x), ``motion`` (2, y, x) in pixels per frame, components (dx, dy).
    """
    n_y, n_x = field.shape
    yy, xx = np.meshgrid(np.arange(n_y), np.arange(n_x), indexing="ij")
    coords = np.stack([yy - steps * motion[1], xx - steps * motion[0]])
    return ndimage.map_coordinates(field, coords, order=1, mode="grid-wrap" if periodic else "nearest")


def radar_echoes(
    rng: np.random.Generator,
    samples: int,
    n: int,
    frames: int,
    *,
    beta: float,
    speed: float,
    drift: float,
    cells: int,
    growth: float,
    log_sigma: float,
    wet_fraction: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Echo intensity (sample, frame, y, x) on a 0-255 VIL-like scale and the true motion (sample, 2, y, x).

    Log-rain = power-law noise; rain where it exceeds the (1 - wet_fraction) quantile, intensity
    exp(log_sigma * g); motion = uniform drift + a smooth divergence-free flow (pixels per frame); each
    frame the log-field is advected semi-Lagrangian and convective Gaussian cells, carried by the flow,
    grow then decay (a source/sink in log space) with peak rate ``growth`` per frame.
    """
    g = power_law_noise(rng, samples, n, beta)
    flow = stream_velocity(rng, samples, n, modes=2, amplitude=speed * n) / n
    angle = rng.uniform(0, 2 * np.pi, size=samples)
    motion = flow + drift * np.stack([np.cos(angle), np.sin(angle)], axis=1)[:, :, None, None]
    centres = rng.uniform(0, n, size=(samples, cells, 2))
    radius = rng.uniform(0.06, 0.12, size=(samples, cells)) * n
    amplitude = growth * rng.choice([-1.0, 1.0], size=(samples, cells)) * rng.uniform(0.5, 1.0, size=(samples, cells))
    birth = rng.uniform(-frames / 2, frames / 2, size=(samples, cells))
    yy, xx = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    thresh = np.quantile(g, 1 - wet_fraction)
    out = np.empty((samples, frames, n, n))
    for s in range(samples):
        field = g[s].copy()
        for t in range(frames):
            wet = field > thresh
            intensity = np.where(wet, np.exp(log_sigma * (field - thresh)) - 1.0, 0.0)
            out[s, t] = intensity
            field = semi_lagrangian(field, motion[s])
            for c in range(cells):
                cx, cy = centres[s, c]
                dxc = (xx - cx + n / 2) % n - n / 2
                dyc = (yy - cy + n / 2) % n - n / 2
                age = (t - birth[s, c]) / frames
                rate = amplitude[s, c] * np.sin(np.pi * np.clip(age, 0.0, 1.0)) * (1 - 2 * (age > 0.5))
                field += rate * np.exp(-(dxc**2 + dyc**2) / (2 * radius[s, c] ** 2))
                iy, ix = int(cy) % n, int(cx) % n
                centres[s, c] += motion[s, :, iy, ix]
    scale = np.quantile(out[out > 0], 0.995) if np.any(out > 0) else 1.0
    vil = np.clip(255.0 * np.log1p(out) / np.log1p(scale), 0.0, 255.0)
    return vil, motion
