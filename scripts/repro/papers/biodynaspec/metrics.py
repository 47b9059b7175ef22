"""Trajectory and ensemble metrics (coordinates in Angstrom, C-alpha unless stated).

- ``r_s_curve``: R_s = mean over the first s frames of the per-frame C-alpha RMSD between
  generated and true frame t (same replicate and start frame), each generated frame
  superposed on its true frame (``per_frame=True``) or on nothing (already in a common frame).
- AlphaFlow ensemble metrics: RMWD (root mean Wasserstein-2 between per-atom Gaussians),
  MD PCA W2 and joint PCA W2 (exact W2 between point clouds in the first PCs, distances
  divided by sqrt(n atoms)).
- Ours (definitions not published; marked as ours in the scoreboard):
  PCA-PSD-LogCorr: project MD and generated trajectories on the top k MD PCs, periodogram
  per PC (mean removed), Pearson correlation of log10 PSDs over non-DC frequency bins,
  mean over PCs. CFRE: ||C_gen - C_MD||_F / ||C_MD||_F of the 3L x 3L positional covariances.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, optimize, signal, sparse, stats

from repro.papers.biodynaspec.geometry import superpose


def r_s_curve(
    generated: np.ndarray, true: np.ndarray, include_first: bool = False, per_frame: bool = True
) -> np.ndarray:
    """``R_s`` for s = 1..S (``[S]``): running mean of per-frame RMSD of ``generated`` vs ``true`` ``[T, L, 3]``.

    Frame 0 (the conditioning frame) is skipped unless ``include_first``.
    """
    n = min(len(generated), len(true))
    gen, ref = np.asarray(generated[:n], np.float64), np.asarray(true[:n], np.float64)
    if per_frame:
        gen = superpose(gen, ref)
    per = np.sqrt(((gen - ref) ** 2).sum(-1).mean(-1))
    per = per if include_first else per[1:]
    return np.cumsum(per) / np.arange(1, len(per) + 1)


def gaussian_w2(mu1: np.ndarray, cov1: np.ndarray, mu2: np.ndarray, cov2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-atom mean term ||mu1 - mu2|| and covariance term sqrt(tr(S1 + S2 - 2 (S1 S2)^1/2)) (``[N]`` each)."""
    m = np.linalg.norm(mu1 - mu2, axis=-1)
    v = np.empty(len(cov1))
    for a, (s1, s2) in enumerate(zip(cov1, cov2, strict=True)):
        root = linalg.sqrtm(s1 @ s2)
        v[a] = np.sqrt(max(np.trace(s1 + s2 - 2 * np.real(root)), 0.0))
    return m, v


def rmwd(md: np.ndarray, gen: np.ndarray) -> float:
    """Root mean W2 between per-atom Gaussians fitted to two ensembles ``[N_frames, n_atoms, 3]``."""

    def fit(x):
        centred = x - x.mean(0)
        return x.mean(0), np.einsum("fai,faj->aij", centred, centred) / max(len(x) - 1, 1)

    m, v = gaussian_w2(*fit(np.asarray(md, np.float64)), *fit(np.asarray(gen, np.float64)))
    return float(np.sqrt(np.mean(m**2) + np.mean(v**2)))


def w2_point_clouds(a: np.ndarray, b: np.ndarray) -> float:
    """Exact W2 between uniform point clouds ``[n, d]`` and ``[m, d]`` by the transport linear programme."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    n, m = len(a), len(b)
    cost = ((a[:, None] - b[None]) ** 2).sum(-1)
    rows = sparse.kron(sparse.eye(n), np.ones((1, m)))
    cols = sparse.kron(np.ones((1, n)), sparse.eye(m))
    res = optimize.linprog(
        cost.ravel(),
        A_eq=sparse.vstack([rows, cols]).tocsr(),
        b_eq=np.concatenate([np.full(n, 1 / n), np.full(m, 1 / m)]),
        bounds=(0, None),
        method="highs",
    )
    if not res.success:
        raise RuntimeError(f"transport LP failed: {res.message}")
    return float(np.sqrt(max(res.fun, 0.0)))


def _pca(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    return mean, vt[:k]


def pca_basis(md_all: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(mean, top ``k`` components) of all MD frames ``[N, L, 3]``: shared by the metrics of every model."""
    return _pca(np.asarray(md_all, np.float64).reshape(len(md_all), -1), k)


def pca_w2(
    md_all: np.ndarray, md_sample: np.ndarray, gen: np.ndarray, k: int = 2, joint: bool = False, basis=None
) -> float:
    """MD PCA W2 (PCA on all MD frames) or joint PCA W2 (PCA on MD sample + generated), in Angstrom.

    Inputs are C-alpha ensembles ``[N, L, 3]`` already superposed on one reference; ``basis`` (from
    :func:`pca_basis`, at least ``k`` components) saves refitting the MD PCA.
    """
    n_atoms = md_all.shape[1]
    flat = lambda x: np.asarray(x, np.float64).reshape(len(x), -1)  # noqa: E731
    if joint:
        mean, comps = _pca(np.concatenate([flat(md_sample), flat(gen)]), k)
    else:
        mean, comps = basis if basis is not None else _pca(flat(md_all), k)
        comps = comps[:k]
    proj = lambda x: (flat(x) - mean) @ comps.T / np.sqrt(n_atoms)  # noqa: E731
    return w2_point_clouds(proj(md_sample), proj(gen))


def pca_psd_logcorr(
    md_traj: np.ndarray, gen_trajs: list[np.ndarray], md_all: np.ndarray, k: int = 5, basis=None
) -> float:
    """Ours: mean over the top ``k`` MD PCs of corr(log10 PSD_gen, log10 PSD_MD) over non-DC bins.

    ``gen_trajs`` PSDs are averaged before the log; every trajectory is cut to the MD length.
    """
    n = min([len(md_traj)] + [len(g) for g in gen_trajs])
    mean, comps = basis if basis is not None else _pca(np.asarray(md_all, np.float64).reshape(len(md_all), -1), k)
    comps = comps[:k]

    def psd(traj):
        proj = (np.asarray(traj[:n], np.float64).reshape(n, -1) - mean) @ comps.T
        return signal.periodogram(proj, axis=0, detrend="constant")[1][1:]

    md_psd = psd(md_traj)
    gen_psd = np.mean([psd(g) for g in gen_trajs], axis=0)
    tiny = 1e-12
    corrs = [
        stats.pearsonr(np.log10(gen_psd[:, i] + tiny), np.log10(md_psd[:, i] + tiny)).statistic
        for i in range(comps.shape[0])
    ]
    return float(np.mean(corrs))


def cfre(md: np.ndarray, gen: np.ndarray) -> float:
    """Ours: relative Frobenius error of the 3L x 3L positional covariance of ``gen`` against ``md``."""

    def cov(x):
        flat = np.asarray(x, np.float64).reshape(len(x), -1)
        return np.cov(flat, rowvar=False)

    c_md = cov(md)
    return float(np.linalg.norm(cov(gen) - c_md) / np.linalg.norm(c_md))


def random_subset(n_total: int, size: int, seed: int = 137) -> np.ndarray:
    """AlphaFlow-style random frame subset (seed 137), without replacement, capped at ``n_total``."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n_total, size=min(size, n_total), replace=False))
