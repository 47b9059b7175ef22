"""The verification's forward model: a second imaging model, of other physics than the generator's.

Incoherent Z-contrast imaging as the convolution of the probe intensity with an object function, both from
first principles rather than the generator's fitted Gaussians:
- probe: the coherent aberrated STEM probe psi(r) = FT^-1[A(k) exp(-i chi(k))], with the objective aperture
  A(k) = 1 for lambda |k| <= alpha (``semiangle_mrad``) and the aberration function
  chi(k) = pi lambda defocus k^2 + pi / 2 Cs lambda^3 k^4 at the relativistic electron wavelength of
  ``energy_kv``; its intensity |psi|^2 is blurred by the finite source size (Gaussian, ``source_sigma`` Å);
- object: each atom's high-angle scattering cross-section ~ Z^n (``z_exponent``, an unscreened-Rutherford-
  like exponent, not the generator's 1.7), smeared by thermal vibration (Gaussian, ``thermal_sigma`` Å),
  summed as an exact structure factor in Fourier space (no pixel rounding of positions).
The image is the real part of FT^-1[O(k) FT(|psi|^2)], computed on a grid padded to twice the field of view
(no wrap-around of the periodic FFT) and cropped, then peak-normalised. abTEM multislice would be a third,
more complete model; its cost on this machine kind is in docs/papers/automat.md.
"""

from __future__ import annotations

import functools

import numpy as np

from repro.papers.automat.chemistry import Z_EXPONENT  # noqa: F401  (the generator's exponent, for comparison)
from repro.papers.automat.forward import tile


def wavelength(energy_kv: float) -> float:
    """Relativistic electron wavelength (Å) at ``energy_kv`` kilovolts."""
    e = energy_kv * 1e3
    return float(12.2643 / np.sqrt(e * (1 + 0.97848e-6 * e)))


def probe_intensity(n: int, pixel: float, cfg: dict) -> np.ndarray:
    """(n, n) probe intensity centred on pixel (0, 0) (FFT order), unit sum."""
    keys = ("energy_kv", "semiangle_mrad", "defocus", "cs_mm", "source_sigma")
    return _probe_intensity(int(n), float(pixel), tuple(float(cfg[k]) for k in keys)).copy()


@functools.lru_cache(maxsize=8)
def _probe_intensity(n: int, pixel: float, params: tuple) -> np.ndarray:
    cfg = dict(zip(("energy_kv", "semiangle_mrad", "defocus", "cs_mm", "source_sigma"), params))
    lam = wavelength(cfg["energy_kv"])
    k = np.fft.fftfreq(n, d=pixel)
    kx, ky = np.meshgrid(k, k)
    k2 = kx**2 + ky**2
    aperture = (lam * np.sqrt(k2) <= cfg["semiangle_mrad"] * 1e-3).astype(float)
    chi = np.pi * lam * cfg["defocus"] * k2 + 0.5 * np.pi * cfg["cs_mm"] * 1e7 * lam**3 * k2**2
    psi = np.fft.ifft2(aperture * np.exp(-1j * chi))
    intensity = np.abs(psi) ** 2
    source = np.exp(-2 * np.pi**2 * cfg["source_sigma"] ** 2 * k2)
    intensity = np.real(np.fft.ifft2(np.fft.fft2(intensity) * source))
    return intensity / intensity.sum()


def render_columns(positions: np.ndarray, numbers: list[tuple[int, ...]], shape: int, pixel: float, cfg: dict):
    """Noiseless image (shape, shape) of columns at ``positions`` (Å) holding atoms ``numbers``, peak-normalised."""
    n = 2 * shape
    k = np.fft.fftfreq(n, d=pixel)
    weights = np.array([np.sum(np.asarray(z, float) ** cfg["z_exponent"]) for z in numbers])
    offset = shape * pixel / 2  # the field of view sits in the middle of the padded grid
    ex = np.exp(-2j * np.pi * np.outer(positions[:, 0] + offset - 0.5 * pixel, k))  # (m, n)
    ey = np.exp(-2j * np.pi * np.outer(positions[:, 1] + offset - 0.5 * pixel, k))
    structure_factor = (weights[:, None] * ey).T @ ex
    kx, ky = np.meshgrid(k, k)
    thermal = np.exp(-2 * np.pi**2 * cfg["thermal_sigma"] ** 2 * (kx**2 + ky**2))
    probe = np.fft.fft2(probe_intensity(n, pixel, cfg))
    image = np.real(np.fft.ifft2(structure_factor * thermal * probe))
    lo = shape // 2
    image = image[lo : lo + shape, lo : lo + shape]
    return image / image.max()


def render(vectors: np.ndarray, frac: np.ndarray, numbers: list[tuple[int, ...]], origin: np.ndarray, shape: int,
           pixel: float, cfg: dict) -> np.ndarray:  # fmt: skip
    """The verifier's image of a monolayer: lattice ``vectors`` (2, 2) in the image frame, columns at ``frac``
    holding ``numbers``, the cell origin at ``origin`` (Å)."""
    index = np.arange(len(numbers), dtype=float)
    pos, which = tile(vectors, np.asarray(frac, float), index, np.asarray(origin, float), shape * pixel)
    return render_columns(pos, [numbers[int(i)] for i in which], shape, pixel, cfg)
