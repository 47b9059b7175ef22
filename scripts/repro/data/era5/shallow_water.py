"""A spectral shallow-water model on the sphere: the trainable embedded default of the ERA5 source.

Why our own: torch-harmonics' solver needs a newer torch than the project allows. The model is the
classic spectral transform method (vorticity-divergence form, Williamson et al. 1992 notation):
Gaussian grid, triangular truncation T = (nlon - 1) // 3 (alias-free for quadratic terms), fully
normalised associated Legendre functions, RK4 in time, implicit del^8 hyperdiffusion. A stochastic
vorticity forcing at mid wavenumbers balanced by linear drag keeps the flow statistically steady,
so one long run gives training, validation and test periods like a reanalysis does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

EARTH_RADIUS = 6.371e6
OMEGA = 7.292e-5
GRAVITY = 9.80616


def legendre(truncation: int, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Normalised P[m, n, j] (int_{-1}^{1} P^2 dmu = 1) and H = (1 - mu^2) dP/dmu, for n <= truncation."""
    nmax = truncation + 1
    p = np.zeros((truncation + 1, nmax + 1, mu.size))
    coslat = np.sqrt(1 - mu**2)
    pmm = np.full(mu.size, 1 / np.sqrt(2))
    eps = np.zeros((truncation + 1, nmax + 2))
    for m in range(truncation + 1):
        for n in range(m, nmax + 2):
            eps[m, n] = np.sqrt((n * n - m * m) / (4 * n * n - 1)) if n > 0 else 0.0
    for m in range(truncation + 1):
        if m > 0:
            pmm = np.sqrt((2 * m + 1) / (2 * m)) * coslat * pmm
        p[m, m] = pmm
        if m + 1 <= nmax:
            p[m, m + 1] = np.sqrt(2 * m + 3) * mu * pmm
        for n in range(m + 2, nmax + 1):
            p[m, n] = (mu * p[m, n - 1] - eps[m, n - 1] * p[m, n - 2]) / eps[m, n]
    h = np.zeros((truncation + 1, truncation + 1, mu.size))
    for m in range(truncation + 1):
        for n in range(m, truncation + 1):
            h[m, n] = -n * eps[m, n + 1] * p[m, n + 1] + ((n + 1) * eps[m, n] * p[m, n - 1] if n > m else 0.0)
    return p[:, : truncation + 1], h


@dataclass
class SphericalGrid:
    """Gaussian grid and the transforms between grid fields (lat, lon) and coefficients (m, n)."""

    nlat: int

    def __post_init__(self) -> None:
        self.nlon = 2 * self.nlat
        self.truncation = (self.nlon - 1) // 3
        self.mu, self.weights = np.polynomial.legendre.leggauss(self.nlat)
        self.latitude = np.degrees(np.arcsin(self.mu))
        self.longitude = np.arange(self.nlon) * 360.0 / self.nlon
        self.p, self.h = legendre(self.truncation, self.mu)
        self.p_t, self.h_t = self.p.transpose(0, 2, 1).copy(), self.h.transpose(0, 2, 1).copy()
        t = self.truncation
        n = np.arange(t + 1)
        self.m = np.arange(t + 1)[:, None] * np.ones((1, t + 1))
        self.mask = n[None, :] >= np.arange(t + 1)[:, None]
        self.laplacian = -(n * (n + 1))[None, :] / EARTH_RADIUS**2 * np.ones((t + 1, 1))
        self.inv_laplacian = np.where(n[None, :] > 0, 1 / np.where(self.laplacian == 0, 1, self.laplacian), 0)
        self.one_minus_mu2 = 1 - self.mu**2

    def _fourier(self, field: np.ndarray) -> np.ndarray:
        return np.fft.rfft(field, axis=-1)[..., : self.truncation + 1] / self.nlon

    def _from_fourier(self, fm: np.ndarray) -> np.ndarray:
        full = np.zeros(fm.shape[:-1] + (self.nlon // 2 + 1,), complex)
        full[..., : self.truncation + 1] = fm
        return np.fft.irfft(full, n=self.nlon, axis=-1) * self.nlon

    @staticmethod
    def _project(fm: np.ndarray, basis_t: np.ndarray) -> np.ndarray:
        """(lat, m) Fourier coefficients times (m, lat, n) basis -> (m, n), one matmul per m."""
        return np.matmul(fm.T[:, None, :], basis_t)[:, 0, :]

    @staticmethod
    def _expand(coeffs: np.ndarray, basis: np.ndarray) -> np.ndarray:
        """(m, n) coefficients times (m, n, lat) basis -> (lat, m)."""
        return np.matmul(coeffs[:, None, :], basis)[:, 0, :].T

    def analyse(self, field: np.ndarray) -> np.ndarray:
        """Grid (lat, lon) -> coefficients (m, n)."""
        fm = self._fourier(field) * self.weights[:, None]
        return self._project(fm, self.p_t) * self.mask

    def synthesise(self, coeffs: np.ndarray) -> np.ndarray:
        """Coefficients (m, n) -> grid (lat, lon)."""
        return self._from_fourier(self._expand(coeffs, self.p))

    def analyse_div(self, f: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Coefficients of (1/(a(1-mu^2))) dF/dlambda + (1/a) dG/dmu for grid F, G."""
        w = (self.weights / self.one_minus_mu2)[:, None]
        fm, gm = self._fourier(f) * w, self._fourier(g) * w
        im = 1j * np.arange(self.truncation + 1)
        out = self._project(fm * im, self.p_t) - self._project(gm, self.h_t)
        return out * self.mask / EARTH_RADIUS

    def winds(self, vort: np.ndarray, div: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """U = u cos(lat), V = v cos(lat) on the grid from vorticity and divergence coefficients."""
        psi, chi = vort * self.inv_laplacian, div * self.inv_laplacian
        im = 1j * np.arange(self.truncation + 1)[:, None]
        u_m = self._expand(im * chi, self.p) - self._expand(psi, self.h)
        v_m = self._expand(im * psi, self.p) + self._expand(chi, self.h)
        return self._from_fourier(u_m) / EARTH_RADIUS, self._from_fourier(v_m) / EARTH_RADIUS


@dataclass
class ShallowWaterSettings:
    """Physical and numerical settings; defaults give ~20 m/s mid-latitude eddies at T21."""

    nlat: int = 32
    mean_depth: float = 8000.0
    dt: float = 1800.0
    drag_days: float = 10.0
    diffusion_hours: float = 3.0
    forcing_wavenumbers: tuple[int, int] = (8, 14)
    forcing_amplitude: float = 1.5e-11
    forcing_memory_hours: float = 24.0
    initial_wind: float = 15.0
    spinup_days: float = 5.0


class ShallowWater:
    """State (vorticity, divergence, geopotential perturbation) in spectral space, stepped with RK4."""

    def __init__(self, settings: ShallowWaterSettings, seed: int):
        self.s = settings
        self.grid = SphericalGrid(settings.nlat)
        g = self.grid
        self.rng = np.random.default_rng(seed)
        self.coriolis = 2 * OMEGA * g.mu[:, None] * np.ones((1, g.nlon))
        self.phi_mean = GRAVITY * settings.mean_depth
        n = np.arange(g.truncation + 1)
        scale = (n * (n + 1) / (g.truncation * (g.truncation + 1))) ** 4
        self.diffusion = np.exp(-settings.dt / (settings.diffusion_hours * 3600.0) * scale)[None, :]
        lo, hi = settings.forcing_wavenumbers
        self.forcing_mask = (
            g.mask & (n[None, :] >= lo) & (n[None, :] <= hi) & (np.arange(g.truncation + 1)[:, None] > 0)
        )
        self.forcing = np.zeros_like(g.mask, complex)
        self.vort = self._random_vorticity(settings.initial_wind)
        self.div = np.zeros_like(self.vort)
        self.phi = np.zeros_like(self.vort)

    def _noise(self) -> np.ndarray:
        shape = self.grid.mask.shape
        return (self.rng.standard_normal(shape) + 1j * self.rng.standard_normal(shape)) * self.forcing_mask

    def _random_vorticity(self, rms_wind: float) -> np.ndarray:
        vort = self._noise()
        u, v = self.grid.winds(vort, np.zeros_like(vort))
        rms = np.sqrt(np.mean((u**2 + v**2) / self.grid.one_minus_mu2[:, None]))
        return vort * rms_wind / rms

    def tendencies(self, vort, div, phi):
        g = self.grid
        u, v = g.winds(vort, div)
        abs_vort = g.synthesise(vort) + self.coriolis
        phi_grid = g.synthesise(phi)
        energy = phi_grid + 0.5 * (u**2 + v**2) / g.one_minus_mu2[:, None]
        drag = 1 / (self.s.drag_days * 86400.0)
        d_vort = -g.analyse_div(abs_vort * u, abs_vort * v) + self.forcing - drag * vort
        d_div = g.analyse_div(abs_vort * v, -abs_vort * u) - g.laplacian * g.analyse(energy) - drag * div
        d_phi = -g.analyse_div(u * phi_grid, v * phi_grid) - self.phi_mean * div
        return d_vort, d_div, d_phi

    def step(self) -> None:
        """One RK4 step, then implicit hyperdiffusion and a new AR(1) forcing draw."""
        dt = self.s.dt
        state = (self.vort, self.div, self.phi)
        k1 = self.tendencies(*state)
        k2 = self.tendencies(*(x + 0.5 * dt * k for x, k in zip(state, k1)))
        k3 = self.tendencies(*(x + 0.5 * dt * k for x, k in zip(state, k2)))
        k4 = self.tendencies(*(x + dt * k for x, k in zip(state, k3)))
        new = [x + dt / 6 * (a + 2 * b + 2 * c + d) for x, a, b, c, d in zip(state, k1, k2, k3, k4)]
        self.vort, self.div, self.phi = (x * self.diffusion for x in new)
        keep = np.exp(-dt / (self.s.forcing_memory_hours * 3600.0))
        self.forcing = keep * self.forcing + np.sqrt(1 - keep**2) * self.s.forcing_amplitude * self._noise()

    def fields(self) -> dict[str, np.ndarray]:
        """Geopotential (m2 s-2) and winds (m s-1) on the grid."""
        g = self.grid
        u, v = g.winds(self.vort, self.div)
        cos = np.sqrt(g.one_minus_mu2)[:, None]
        return {
            "geopotential": g.synthesise(self.phi) + self.phi_mean,
            "u_component_of_wind": u / cos,
            "v_component_of_wind": v / cos,
        }


def simulate(
    settings: ShallowWaterSettings, seed: int, n_steps: int, output_hours: int = 6, start: str = "2000-01-01"
) -> xr.Dataset:
    """Spin up, then record ``n_steps`` states every ``output_hours`` as a canonical-layout dataset."""
    model = ShallowWater(settings, seed)
    per_output = int(round(output_hours * 3600 / settings.dt))
    for _ in range(int(round(settings.spinup_days * 86400 / settings.dt))):
        model.step()
    records = []
    for _ in range(n_steps):
        records.append(model.fields())
        for _ in range(per_output):
            model.step()
    times = pd.date_range(start, periods=n_steps, freq=f"{output_hours}h")
    grid = model.grid
    coords = {"time": times, "level": [500], "latitude": grid.latitude, "longitude": grid.longitude}
    data = {
        name: (
            ("time", "level", "latitude", "longitude"),
            np.stack([r[name] for r in records])[:, None].astype(np.float32),
        )
        for name in records[0]
    }
    ds = xr.Dataset(data, coords=coords)
    ds.attrs["source"] = f"spectral shallow-water model T{grid.truncation}, seed {seed}"
    return ds
