"""Image analysis tools of the reconstruction (STEM2CIF's steps) and the denoising experts.

- Pattern-adaptive denoising (stand-in for MOE-DIVAESR, whose trained weights are not offline): the gate
  estimates the electron dose from the counts (Poisson: mean counts / (pixel area * (background + mean
  signal))) and picks an expert: a light Gaussian at high dose, a stronger one at medium dose, and a Bragg
  (periodic) filter that keeps only the Fourier components near the strongest lattice peaks at low dose.
- Atom-column peaks: local maxima (scikit-image ``peak_local_max``), each refined by a 2-D Gaussian fit to its
  3 x 3 neighbourhood (the logarithm of a Gaussian is a quadratic, fitted by least squares), which gives the
  sub-pixel position and the peak height.
- Column intensities: each column's scattering cross-section (Å^2), its background-subtracted counts in a
  disk over the dose (quantitative HAADF); species by intensity clustering: k-means (scipy) of the log
  cross-sections, k chosen by the silhouette (scikit-learn).
- Lattice and primitive cell by search: candidate translations are the vectors between neighbouring peaks;
  a candidate scores the fraction of peaks it maps onto a peak of the same species cluster; the shortest two
  independent candidates above ``translation_score`` form the cell, Gauss-reduced to the primitive one; the
  next pairs are alternative lattice hypotheses. A second lattice source is the Fourier fit of a hexagonal
  lattice (the summed power of the six first-ring reciprocal vectors over (a, theta)).
- Basis: each peak's position in cell coordinates, wrapped into the cell, grouped into sites; the lattice
  vectors, the origin and the site offsets are then refined by linear least squares over every peak.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage, optimize


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


def ring_power_grid(image: np.ndarray, grid_a: np.ndarray, grid_t: np.ndarray, pixel: float) -> np.ndarray:
    """:func:`ring_power` on every (a, theta) of a grid (len(grid_a), len(grid_t)), as one matrix product."""
    n = image.shape[0]
    coords = (np.arange(n) + 0.5) * pixel
    g = 2 / (np.sqrt(3) * np.asarray(grid_a, float))
    phi = np.asarray(grid_t, float)[:, None] + np.pi / 6 + np.arange(3)[None] * np.pi / 3  # (t, 3)
    gx = (g[:, None, None] * np.cos(phi)[None]).ravel()  # (a * t * 3,)
    gy = (g[:, None, None] * np.sin(phi)[None]).ravel()
    ex = np.exp(-2j * np.pi * gx[:, None] * coords[None])  # (f, n)
    ey = np.exp(-2j * np.pi * gy[:, None] * coords[None])
    centred = image - image.mean()
    values = np.sum((ey @ centred) * ex, axis=1)
    return (np.abs(values) ** 2).reshape(len(grid_a), len(grid_t), 3).sum(axis=2)


def lattice_hypotheses(
    image: np.ndarray, pixel: float, a_range: tuple[float, float]
) -> list[tuple[float, float, float]]:
    """Candidate (a, theta, power) from a coarse grid then Nelder-Mead refinement, strongest first; the
    sqrt(3)-related rings of the best one are refined and kept as alternative hypotheses."""
    grid_a = np.linspace(*a_range, 24)
    grid_t = np.linspace(0, np.pi / 3, 10, endpoint=False)
    scores = ring_power_grid(image, grid_a, grid_t, pixel)
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


def denoise(
    counts: np.ndarray, cfg: dict, a_range: tuple[float, float], expert: int | None = None, dose: float | None = None
) -> tuple[np.ndarray, int]:
    """(denoised image, expert index) by the noise-gated mixture of experts (or the expert asked for); the gate
    reads the recorded dose, or estimates it from the counts when none is given."""
    if expert is None:
        expert = gate(dose if dose is not None else estimate_dose(counts, cfg["pixel"], cfg["background"]),
                      cfg["gate_doses"])  # fmt: skip
    if expert == 0:
        return ndimage.gaussian_filter(counts, cfg["sigma_light"]), expert
    if expert == 1:
        return ndimage.gaussian_filter(counts, cfg["sigma_strong"]), expert
    return bragg_filter(
        ndimage.gaussian_filter(counts, cfg["sigma_light"]), cfg["pixel"], a_range, cfg["bragg_keep"]
    ), expert


def hexagonal_vectors(a: float, theta: float) -> np.ndarray:
    """In-plane lattice vectors (rows) of a hexagonal cell with 120 degrees between them, rotated by theta."""
    base = np.array([[a, 0.0], [-a / 2, a * np.sqrt(3) / 2]])
    c, s = np.cos(theta), np.sin(theta)
    return base @ np.array([[c, s], [-s, c]])


def find_peaks(image: np.ndarray, pixel: float, min_distance: float, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(column positions (k, 2) in Å as (x, y), peak heights (k,)) of the local maxima above ``threshold`` of
    the image's range, each refined by a log-quadratic 2-D Gaussian fit on its 3 x 3 neighbourhood."""
    from skimage.feature import peak_local_max

    base = image - np.percentile(image, 1) + 1e-6 * (np.ptp(image) + 1e-12)
    found = peak_local_max(base, min_distance=max(1, int(round(min_distance / pixel))), threshold_rel=threshold,
                           exclude_border=1)  # fmt: skip
    if len(found) == 0:
        return np.zeros((0, 2)), np.zeros(0)
    yy, xx = np.mgrid[-1:2, -1:2].astype(float)
    design = np.column_stack([np.ones(9), xx.ravel(), yy.ravel(), xx.ravel() ** 2, yy.ravel() ** 2, (xx * yy).ravel()])
    patches = np.stack([base[y - 1 : y + 2, x - 1 : x + 2].ravel() for y, x in found])
    coef = np.linalg.lstsq(design, np.log(np.maximum(patches, 1e-12)).T, rcond=None)[0].T  # (k, 6)
    hessian = np.stack([np.stack([2 * coef[:, 3], coef[:, 5]], -1), np.stack([coef[:, 5], 2 * coef[:, 4]], -1)], 1)
    ok = np.linalg.det(hessian) > 1e-12
    offset = np.zeros((len(found), 2))
    offset[ok] = np.linalg.solve(hessian[ok], -coef[ok, 1:3, None])[..., 0]
    offset = np.where(np.abs(offset) <= 1.0, offset, 0.0)  # a poor fit keeps the pixel centre
    dx, dy = offset[:, 0], offset[:, 1]
    log_peak = (
        coef[:, 0] + coef[:, 1] * dx + coef[:, 2] * dy + coef[:, 3] * dx**2 + coef[:, 4] * dy**2 + coef[:, 5] * dx * dy
    )
    positions = np.column_stack([found[:, 1] + dx + 0.5, found[:, 0] + dy + 0.5]) * pixel
    return positions, np.exp(log_peak)


def cross_sections(
    counts: np.ndarray, positions: np.ndarray, dose: float, pixel: float, sigma: float, background: float | None = None
) -> np.ndarray:
    """Scattering cross-section (Å^2) of each column (quantitative HAADF): its Voronoi-integrated intensity,
    the background-subtracted counts of the pixels nearer to it than to any other column (and within 3 ``sigma``
    of it), over the dose; ``background`` is the detector's background in counts per pixel (the 2nd percentile
    of the image when not given). Tails a column sends into its neighbours' cells come back from theirs, so the estimate
    needs no model of the probe, and a column the peak search missed only biases its neighbours."""
    from scipy.spatial import cKDTree

    if len(positions) == 0:
        return np.zeros(0)
    n = counts.shape[0]
    grid = (np.arange(n) + 0.5) * pixel
    gx, gy = np.meshgrid(grid, grid)
    dist, owner = cKDTree(positions).query(np.column_stack([gx.ravel(), gy.ravel()]))
    background = np.percentile(counts, 2) if background is None else background
    near = dist <= 3 * sigma
    total = np.bincount(owner[near], weights=counts.ravel()[near] - background, minlength=len(positions))
    return total / dose


def gaussian_amplitudes(
    counts: np.ndarray, positions: np.ndarray, dose: float, pixel: float, sigma: float
) -> np.ndarray:
    """Cross-sections (Å^2) of the bright columns from a joint linear least-squares fit of Gaussian probes of
    width ``sigma`` and a flat background (pixels away from the border): the model subtracted before the
    second pass looks for the dim columns."""
    grid = (np.arange(counts.shape[0]) + 0.5) * pixel
    gx = np.exp(-((grid[None, :] - positions[:, 0:1]) ** 2) / (2 * sigma**2))
    gy = np.exp(-((grid[None, :] - positions[:, 1:2]) ** 2) / (2 * sigma**2))
    design = (gy[:, :, None] * gx[:, None, :]).reshape(len(positions), -1).T / (2 * np.pi * sigma**2)
    design = np.column_stack([design * dose * pixel**2, np.ones(design.shape[0])])
    inner = (grid >= 2 * sigma) & (grid <= grid[-1] + 0.5 * pixel - 2 * sigma)
    keep = (inner[:, None] & inner[None, :]).ravel()
    return np.linalg.lstsq(design[keep], counts.ravel()[keep], rcond=None)[0][:-1]


def site_cross_sections(
    counts: np.ndarray,
    cell: np.ndarray,
    origin: np.ndarray,
    basis: np.ndarray,
    dose: float,
    pixel: float,
    sigma: float,
    background: float | None = None,
) -> np.ndarray:
    """Cross-section (Å^2) of each basis site from a lattice-constrained fit: the image modelled as the background
    plus, per site, one Gaussian probe of width ``sigma`` on every column the lattice puts in or near the field,
    all columns of a site sharing one amplitude (linear least squares over every pixel)."""
    from repro.papers.automat.forward import tile

    n = counts.shape[0]
    grid = (np.arange(n) + 0.5) * pixel
    columns = []
    for site in np.asarray(basis, float):
        pos, _ = tile(cell, site[None], np.ones(1), np.asarray(origin, float), n * pixel)
        gx = np.exp(-((grid[None, :] - pos[:, 0:1]) ** 2) / (2 * sigma**2))
        gy = np.exp(-((grid[None, :] - pos[:, 1:2]) ** 2) / (2 * sigma**2))
        columns.append((gy.T @ gx).ravel() / (2 * np.pi * sigma**2) * dose * pixel**2)
    target = counts.ravel().astype(float)
    if background is None:
        design = np.column_stack([*columns, np.ones(n * n)])
        return np.linalg.lstsq(design, target, rcond=None)[0][:-1]
    return np.linalg.lstsq(np.column_stack(columns), target - background, rcond=None)[0]


def find_columns(
    den: np.ndarray, dose: float, pixel: float, sigma: float, cfg: dict, background: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(positions (k, 2) Å, cross-sections (k,) Å^2) of the columns in two passes, as sublattice analysis does:
    the bright columns first, then, with their Gaussian model (the probe width ``sigma``) subtracted, the dim
    columns their tails hide (at least twice ``peak_distance`` from a bright one); the cross-sections of all of
    them fitted jointly."""
    from scipy.spatial import cKDTree

    first, _ = find_peaks(den, pixel, cfg["peak_distance"], cfg["peak_threshold"])
    if len(first) < 2:
        return first, np.zeros(len(first))
    bright = gaussian_amplitudes(den, first, dose, pixel, sigma)
    grid = (np.arange(den.shape[0]) + 0.5) * pixel
    gx = np.exp(-((grid[None, :] - first[:, 0:1]) ** 2) / (2 * sigma**2))
    gy = np.exp(-((grid[None, :] - first[:, 1:2]) ** 2) / (2 * sigma**2))
    model = (np.maximum(bright, 0)[:, None] * gy).T @ gx / (2 * np.pi * sigma**2) * dose * pixel**2
    residual = den - model
    second, _ = find_peaks(residual, pixel, cfg["peak_distance"], cfg["residual_threshold"])
    if len(second):
        far = cKDTree(first).query(second)[0] >= cfg["peak_distance"] * 2
        second = second[far]
    if len(second) == 0:
        return first, cross_sections(den, first, dose, pixel, sigma, background)
    both = np.concatenate([first, second])
    return both, cross_sections(den, both, dose, pixel, sigma, background)


def cluster_intensities(heights: np.ndarray, max_k: int, min_silhouette: float, seed: int = 0) -> np.ndarray:
    """Species labels (k,) of the peaks, 0 = brightest cluster: k-means (scipy) on log heights, the k in
    2..max_k with the best silhouette (scikit-learn) when it reaches ``min_silhouette``, else one cluster."""
    from scipy.cluster.vq import kmeans2
    from sklearn.metrics import silhouette_score

    x = np.log(np.maximum(heights, 1e-12))[:, None]
    best, labels = min_silhouette, np.zeros(len(x), dtype=int)
    for k in range(2, max_k + 1):
        if len(np.unique(np.round(x, 6))) <= k:
            break
        _, fit = kmeans2(x, k, minit="++", seed=np.random.default_rng([seed, k]))
        if len(np.unique(fit)) < k:
            continue
        score = silhouette_score(x, fit)
        if score > best:
            best, labels = score, fit
    order = np.argsort([-x[labels == k].mean() for k in range(labels.max() + 1)])
    return np.argsort(order)[labels]


def translation_score(positions: np.ndarray, labels: np.ndarray, v: np.ndarray, extent: float, tol: float) -> float:
    """Fraction of peaks p (with p + v inside the field) that have a peak of the same cluster within ``tol`` of p + v."""
    from scipy.spatial import cKDTree

    target = positions + v
    inside = np.all((target > tol) & (target < extent - tol), axis=1)
    if inside.sum() < 3:
        return 0.0
    tree = cKDTree(positions)
    dist, idx = tree.query(target[inside])
    return float(np.mean((dist <= tol) & (labels[idx] == labels[inside])))


def lattice_search(positions: np.ndarray, labels: np.ndarray, extent: float, cfg: dict) -> list[np.ndarray]:
    """Candidate primitive cells (2, 2), best first: pairs of the shortest independent translations that map at
    least ``translation_score`` of the peaks onto same-cluster peaks, Gauss-reduced, distinct cells only."""
    from scipy.spatial import cKDTree

    from repro.papers.automat.chemistry import gauss_reduce

    if len(positions) < 6:
        return []
    tree = cKDTree(positions)
    _, nearest = tree.query(positions, k=min(len(positions), int(cfg["neighbours"]) + 1))
    vectors = (positions[nearest[:, 1:]] - positions[:, None]).reshape(-1, 2)
    vectors = vectors[(np.linalg.norm(vectors, axis=1) >= cfg["a_range"][0] * 0.5)]
    vectors = vectors[np.lexsort((vectors[:, 1], vectors[:, 0]))]
    # one representative per cluster of candidate vectors (and a sign convention: v and -v are the same)
    vectors = np.where((vectors[:, :1] < 0) | ((vectors[:, :1] == 0) & (vectors[:, 1:] < 0)), -vectors, vectors)
    members: list[list[np.ndarray]] = []
    for v in vectors[np.argsort(np.linalg.norm(vectors, axis=1))]:
        for group in members:
            if np.linalg.norm(v - group[0]) <= cfg["tolerance"]:
                group.append(v)
                break
        else:
            members.append([v])
    reps = [np.mean(group, axis=0) for group in members]  # each candidate translation: its cluster's mean
    tol, need = float(cfg["tolerance"]), float(cfg["translation_score"])
    good = [r for r in reps[: int(cfg["candidates"])] if translation_score(positions, labels, r, extent, tol) >= need]
    cells: list[np.ndarray] = []
    for i, u in enumerate(good):
        for w in good[i + 1 :]:
            cross = abs(u[0] * w[1] - u[1] * w[0])
            if cross < 0.5 * np.linalg.norm(u) * np.linalg.norm(w):
                continue
            cell = gauss_reduce(np.array([u, w]))
            area = abs(np.linalg.det(cell))
            if not cfg["a_range"][0] <= np.linalg.norm(cell[0]) <= cfg["a_range"][1]:
                continue
            if all(abs(abs(np.linalg.det(c)) - area) > 0.05 * area or not _same_cell(c, cell, tol) for c in cells):
                cells.append(cell)
            if len(cells) >= int(cfg["lattices"]):
                return cells
    return cells


def _same_cell(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    """Do two reduced cells span the same lattice (each vector of one an integer combination of the other)?"""
    coeff = np.linalg.solve(a.T, b.T)
    return bool(np.all(np.abs(coeff - np.round(coeff)) * np.linalg.norm(a, axis=1)[:, None] < tol))


def fit_basis(positions: np.ndarray, labels: np.ndarray, heights: np.ndarray, cell: np.ndarray, cfg: dict) -> dict:
    """:func:`fit_basis_once`, repeated once from its refined cell (a first cell a few percent off assigns peaks
    far from the reference to the wrong site)."""
    fit = fit_basis_once(positions, labels, heights, cell, cfg)
    return fit_basis_once(positions, labels, heights, fit["cell"], cfg)


def fit_basis_once(positions: np.ndarray, labels: np.ndarray, heights: np.ndarray, cell: np.ndarray, cfg: dict) -> dict:
    """Refined cell (2, 2), origin (2,), basis sites (s, 2) fractional, each site's cluster label and mean height:
    peaks in cell coordinates (relative to the peak nearest the field's centre of the brightest cluster), wrapped,
    grouped into sites (``site_tolerance``, fractional), sites with fewer than ``min_site_peaks`` dropped, then
    linear least squares of every kept peak = n a1 + m a2 + origin + site offset."""
    centre = positions.mean(axis=0)
    bright = np.flatnonzero(labels == labels.min())
    ref = bright[np.argmin(np.linalg.norm(positions[bright] - centre, axis=1))]
    frac = np.linalg.solve(cell.T, (positions - positions[ref]).T).T
    wrapped = frac - np.round(frac)  # in [-0.5, 0.5): the reference site at 0
    sites: list[np.ndarray] = []
    assignment = np.full(len(positions), -1)
    for i in np.argsort(np.linalg.norm(wrapped, axis=1)):
        for s, centre_s in enumerate(sites):
            d = (wrapped[i] - centre_s + 0.5) % 1.0 - 0.5
            if np.all(np.abs(d) <= cfg["site_tolerance"]):
                assignment[i] = s
                break
        else:
            sites.append(wrapped[i].copy())
            assignment[i] = len(sites) - 1
    counts = np.bincount(assignment, minlength=len(sites))
    kept = [s for s in range(len(sites)) if counts[s] >= cfg["min_site_peaks"]]
    use = np.isin(assignment, kept)
    site_index = {s: k for k, s in enumerate(kept)}
    cells = np.round(frac - np.array([sites[s] for s in assignment]))  # integer cell of each peak
    # unknowns: a1 (2), a2 (2), offset of each kept site (2 each, the origin folded in)
    rows = []
    for i in np.flatnonzero(use):
        n, m = cells[i]
        for axis in range(2):
            row = np.zeros(4 + 2 * len(kept))
            row[axis], row[2 + axis] = n, m
            row[4 + 2 * site_index[assignment[i]] + axis] = 1.0
            rows.append(row)
    design = np.array(rows)
    target = positions[use].ravel()
    solution = np.linalg.lstsq(design, target, rcond=None)[0]
    refined = np.array([solution[0:2], solution[2:4]])
    offsets = solution[4:].reshape(-1, 2)
    origin = offsets[0]
    basis = np.linalg.solve(refined.T, (offsets - origin).T).T % 1.0
    residual = float(np.sqrt(np.mean((design @ solution - target) ** 2)))
    return {
        "cell": refined,
        "origin": origin,
        "basis": basis,
        "site_label": np.array([np.bincount(labels[assignment == s]).argmax() for s in kept]),
        "site_height": np.array([np.median(heights[assignment == s]) for s in kept]),
        "site_peaks": counts[kept],
        "residual": residual,
        "peaks_used": int(use.sum()),
    }
