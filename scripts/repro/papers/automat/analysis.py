"""Image analysis tools the controller calls: denoising experts with a noise gate, the hexagonal lattice fit,
translation search, column peak fitting and sublattice intensities.

- Pattern-adaptive denoising (stand-in for MOE-DIVAESR, whose trained weights are not offline): the
  gate estimates the electron dose from the counts (Poisson: mean counts / (pixel area * (background +
  mean signal))) and picks an expert: a light Gaussian at high dose, a stronger one at medium dose, and a
  Bragg (periodic) filter that keeps only the Fourier components near the strongest lattice peaks at low dose.
- Symmetry-constrained lattice fit: hexagonal (|a1| = |a2|, 120°), fitted by maximising the summed
  Fourier power of the image at the six first-ring reciprocal vectors over (a, theta), started from a
  grid; each hypothesis of the ring's index (a, a*sqrt(3), a/sqrt(3)) is refined and scored.
- Column peak fitting: local maxima refined by a least-squares 2-D Gaussian on a patch.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage, optimize

from repro.papers.automat.forward import column_positions, render


def estimate_dose(counts: np.ndarray, pixel: float, background: float) -> float:
    """Electron dose (e/Å^2) from Poisson counts, assuming the mean normalised signal of a monolayer image."""
    return float(counts.mean() / (pixel**2 * (background + 0.25)))


def ring_power(image: np.ndarray, a: float, theta: float, pixel: float) -> float:
    """Summed Fourier power at the six first-ring reciprocal vectors of a hexagonal lattice (a, theta);
    the 2-D transform at one frequency factorises into two 1-D phase vectors."""
    n = image.shape[0]
    coords = (np.arange(n) + 0.5) * pixel
    g = 2 / (np.sqrt(3) * a)
    centred = image - image.mean()
    total = 0.0
    for k in range(3):  # the other three are the complex conjugates
        phi = theta + np.pi / 6 + k * np.pi / 3
        ex = np.exp(-2j * np.pi * g * np.cos(phi) * coords)
        ey = np.exp(-2j * np.pi * g * np.sin(phi) * coords)
        total += abs(ey @ centred @ ex) ** 2
    return float(total)


def lattice_hypotheses(
    image: np.ndarray, pixel: float, a_range: tuple[float, float]
) -> list[tuple[float, float, float]]:
    """Candidate (a, theta, power) from a coarse grid then Nelder-Mead refinement, strongest first; the
    sqrt(3)-related rings of the best one are refined and kept as alternative hypotheses."""
    grid_a = np.linspace(*a_range, 24)
    grid_t = np.linspace(0, np.pi / 3, 10, endpoint=False)
    scores = np.array([[ring_power(image, a, t, pixel) for t in grid_t] for a in grid_a])
    i, j = np.unravel_index(np.argmax(scores), scores.shape)

    def refine(a0: float, t0: float) -> tuple[float, float, float]:
        res = optimize.minimize(
            lambda p: -ring_power(image, p[0], p[1], pixel), [a0, t0], method="Nelder-Mead",
            options={"xatol": 1e-4, "fatol": 1e-8, "maxiter": 200},
        )  # fmt: skip
        return float(res.x[0]), float(res.x[1] % (np.pi / 3)), float(-res.fun)

    best = refine(grid_a[i], grid_t[j])
    out = [best]
    for factor, turn in ((np.sqrt(3), np.pi / 6), (1 / np.sqrt(3), np.pi / 6)):
        out.append(refine(best[0] * factor, best[1] + turn))
    return sorted(out, key=lambda h: -h[2])


def gate(dose: float, thresholds: list[float]) -> int:
    """Expert index from the estimated dose: 0 light Gaussian (high dose), 1 strong Gaussian, 2 Bragg filter."""
    return 0 if dose >= thresholds[0] else (1 if dose >= thresholds[1] else 2)


def bragg_filter(image: np.ndarray, pixel: float, a_range: tuple[float, float], keep: float) -> np.ndarray:
    """Keep the Fourier components within ``keep`` (fraction of |g|) of the first- and second-ring
    reciprocal vectors of the image's strongest hexagonal lattice (a periodic, pattern-adaptive filter)."""
    a, theta, _ = lattice_hypotheses(image, pixel, a_range)[0]
    n = image.shape[0]
    f = np.fft.fftfreq(n, d=pixel)
    fx, fy = np.meshgrid(f, f)
    mask = np.zeros_like(fx, bool)
    g = 2 / (np.sqrt(3) * a)
    for ring, offset in ((g, np.pi / 6), (g * np.sqrt(3), 0.0), (2 * g, np.pi / 6)):
        for k in range(6):
            phi = theta + offset + k * np.pi / 3
            mask |= np.hypot(fx - ring * np.cos(phi), fy - ring * np.sin(phi)) < keep * g
    mask |= np.hypot(fx, fy) < keep * g
    return np.real(np.fft.ifft2(np.fft.fft2(image) * mask))


def denoise(counts: np.ndarray, cfg: dict, a_range: tuple[float, float]) -> tuple[np.ndarray, int]:
    """(denoised image, expert index) by the noise-gated mixture of experts."""
    expert = gate(estimate_dose(counts, cfg["pixel"], cfg["background"]), cfg["gate_doses"])
    if expert == 0:
        return ndimage.gaussian_filter(counts, cfg["sigma_light"]), expert
    if expert == 1:
        return ndimage.gaussian_filter(counts, cfg["sigma_strong"]), expert
    return bragg_filter(
        ndimage.gaussian_filter(counts, cfg["sigma_light"]), cfg["pixel"], a_range, cfg["bragg_keep"]
    ), expert


def best_shift(image: np.ndarray, name: str, a: float, theta: float, cfg: dict) -> tuple[np.ndarray, float]:
    """Translation of the rendered template that best matches the image (FFT cross-correlation over one
    cell's worth of shifts) and the NCC there."""
    from repro.papers.automat.forward import ncc

    extent = cfg["shape"] * cfg["pixel"]
    model = render(*column_positions(name, a, theta, np.zeros(2), extent), cfg["shape"], cfg["pixel"], cfg["sigma"])
    corr = np.real(np.fft.ifft2(np.fft.fft2(image - image.mean()) * np.conj(np.fft.fft2(model - model.mean()))))
    iy, ix = np.unravel_index(np.argmax(corr), corr.shape)
    n = cfg["shape"]
    shift = np.array([ix if ix < n // 2 else ix - n, iy if iy < n // 2 else iy - n], float) * cfg["pixel"]
    shifted = render(*column_positions(name, a, theta, shift, extent), cfg["shape"], cfg["pixel"], cfg["sigma"])
    return shift, ncc(image, shifted)


def sublattice_ratio(image: np.ndarray, a: float, theta: float, cfg: dict) -> float:
    """Dimmer over brighter mean intensity of the two honeycomb sublattices, sampled at their sites after
    locating them with an equal-weight honeycomb (order-free, as an image cannot tell which is which)."""
    shift, _ = best_shift(image, "graphene", a, theta, cfg)
    extent = cfg["shape"] * cfg["pixel"]
    pos, _, site = column_positions("graphene", a, theta, shift, extent, sites=True)
    inside = np.all((pos > cfg["pixel"]) & (pos < extent - cfg["pixel"]), axis=1)
    values = ndimage.map_coordinates(image, [pos[:, 1] / cfg["pixel"] - 0.5, pos[:, 0] / cfg["pixel"] - 0.5], order=1)
    base = np.percentile(image, 10)
    lo, hi = np.sort([np.mean(values[inside & (site == k)]) - base for k in (0, 1)])
    return float(max(lo, 1e-6) / max(hi, 1e-6))


def fit_peaks(image: np.ndarray, pixel: float, sigma: float, threshold: float = 0.2) -> np.ndarray:
    """Column positions (k, 2) in Å: local maxima above threshold * max, each refined by a 2-D Gaussian fit
    to its 3 x 3 neighbourhood (Caruana's method: the logarithm of a Gaussian is a quadratic, fitted by
    least squares), which keeps the neighbouring columns' tails out of the fit. ``sigma`` (the probe blur)
    only bounds the accepted sub-pixel offset."""
    peaks = (image == ndimage.maximum_filter(image, size=3)) & (image > threshold * image.max())
    yy, xx = np.mgrid[-1:2, -1:2].astype(float)
    design = np.column_stack([np.ones(9), xx.ravel(), yy.ravel(), xx.ravel() ** 2, yy.ravel() ** 2, (xx * yy).ravel()])
    out = []
    for y, x in np.argwhere(peaks):
        if not (1 <= y < image.shape[0] - 1 and 1 <= x < image.shape[1] - 1):
            continue
        patch = image[y - 1 : y + 2, x - 1 : x + 2]
        if np.any(patch <= 0):
            continue
        c = np.linalg.lstsq(design, np.log(patch).ravel(), rcond=None)[0]
        hessian = np.array([[2 * c[3], c[5]], [c[5], 2 * c[4]]])
        offset = np.linalg.solve(hessian, -c[1:3])
        if np.all(np.abs(offset) <= min(1.0, sigma / pixel)):
            out.append(((x + offset[0] + 0.5) * pixel, (y + offset[1] + 0.5) * pixel))
    return np.asarray(out)
