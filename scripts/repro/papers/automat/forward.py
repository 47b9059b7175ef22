"""The generator's forward model: incoherent HAADF-STEM with Gaussian columns, and Poisson dose noise.

Image(x) = sum over projected columns of s_c * exp(-|x - p_c|^2 / (2 sigma^2)) / (2 pi sigma^2): the fraction of
the beam the detector collects at x, with each column's scattering cross-section s_c = cross_section * sum of
Z^1.7 over its atoms (Å^2; quantitative HAADF: the integrated intensity of a column over the dose is its cross-
section) and sigma the probe blur. Noise: Poisson counts with mean dose * pixel_area * (background + image). The
reconstruction is verified with another model (:mod:`repro.papers.automat.verifier`), never with this one.
"""

from __future__ import annotations

import numpy as np

from repro.papers.automat.chemistry import Z_EXPONENT, column_weight, columns

MARGIN = 3.0  # Å of columns rendered outside the field of view (their tails reach in)


def rotation(theta: float) -> np.ndarray:
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])


def structure_columns(structure, theta: float, exponent: float = Z_EXPONENT):
    """(in-plane lattice vectors (2, 2) rotated by theta, fractional column positions (k, 2), column weights (k,),
    atomic numbers per column) of a monolayer structure whose c axis is the beam."""
    vectors = np.asarray(structure.lattice.matrix)[:2, :2] @ rotation(theta).T
    frac, numbers = columns(structure)
    return vectors, frac, np.array([column_weight(n, exponent) for n in numbers]), numbers


def tile(vectors: np.ndarray, frac: np.ndarray, values: np.ndarray, origin: np.ndarray, extent: float):
    """Cartesian positions (m, 2) of every column image in [-MARGIN, extent + MARGIN)^2 and its value."""
    vectors = np.asarray(vectors, dtype=float)
    height = np.min(np.abs(np.linalg.det(vectors)) / np.linalg.norm(vectors, axis=1))  # the cell's smaller width
    if not height > 0.5:
        raise ValueError(f"degenerate cell {vectors.tolist()}: widths below 0.5 Å")
    span = int(np.ceil((extent + 2 * MARGIN) / height))
    n = span + 2
    ij = np.stack(np.meshgrid(np.arange(-n, n + 1), np.arange(-n, n + 1)), -1).reshape(-1, 2)
    centre = np.linalg.solve(vectors.T, np.full(2, extent / 2) - origin)
    ij = ij + np.round(centre).astype(int)
    pos = ((ij[:, None, :] + frac[None]) @ vectors).reshape(-1, 2) + origin
    vals = np.tile(values, len(ij))
    keep = np.all((pos > -MARGIN) & (pos < extent + MARGIN), axis=1)
    return pos[keep], vals[keep]


def render(positions: np.ndarray, sections: np.ndarray, shape: int, pixel: float, sigma: float) -> np.ndarray:
    """Noiseless image (shape, shape) at ``pixel`` Å/px: the detected fraction of the beam, columns of cross-
    section ``sections`` (Å^2) blurred by a normalised Gaussian probe."""
    grid = (np.arange(shape) + 0.5) * pixel
    gx = np.exp(-((grid[None, :] - positions[:, 0:1]) ** 2) / (2 * sigma**2))
    gy = np.exp(-((grid[None, :] - positions[:, 1:2]) ** 2) / (2 * sigma**2))
    return (sections[:, None] * gy).T @ gx / (2 * np.pi * sigma**2)


def render_structure(structure, theta: float, shift: np.ndarray, cfg: dict) -> np.ndarray:
    """The generator's image of ``structure`` rotated by theta, its cell origin at ``shift`` (Å)."""
    vectors, frac, weights, _ = structure_columns(structure, theta)
    pos, w = tile(vectors, frac, weights, np.asarray(shift, float), cfg["shape"] * cfg["pixel"])
    return render(pos, cfg["cross_section"] * w, cfg["shape"], cfg["pixel"], cfg["sigma"])


def noisy(image: np.ndarray, dose: float, pixel: float, background: float, rng: np.random.Generator) -> np.ndarray:
    """Poisson counts at ``dose`` electrons per Å^2."""
    return rng.poisson(dose * pixel**2 * (background + image)).astype(np.float64)


def ncc(a: np.ndarray, b: np.ndarray) -> float:
    """Normalised cross-correlation (Pearson correlation of the pixels)."""
    a, b = a - a.mean(), b - b.mean()
    return float(np.sum(a * b) / np.sqrt(np.sum(a * a) * np.sum(b * b)))
