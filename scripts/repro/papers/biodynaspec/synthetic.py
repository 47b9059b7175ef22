"""Near-equilibrium C-alpha trajectories with known answers: an anisotropic network model (ANM).

Springs join C-alpha atoms closer than ``cutoff`` Å; the six rigid-body modes are dropped and
overdamped Langevin dynamics is integrated exactly in the normal-mode basis (each mode an
AR(1) / Ornstein-Uhlenbeck process with stationary variance kT / lambda_k). The stationary
positional covariance is kT H^+ exactly, and the slowest mode decorrelates within
``decorrelation_frames`` frames. Used for two checks of the metric definitions:
the sample covariance converges to kT H^+ (CFRE), and a spectral generator (independent
Gaussian Fourier coefficients) matches the MD spectrum better than i.i.d. frame sampling
from the same per-atom Gaussians (PCA-PSD-LogCorr), while both match the ensemble (RMWD).
"""

from __future__ import annotations

import numpy as np


def anm_hessian(ca: np.ndarray, cutoff: float = 10.0) -> np.ndarray:
    """3L x 3L ANM Hessian with unit springs between C-alpha atoms within ``cutoff``."""
    n = len(ca)
    diff = ca[None] - ca[:, None]
    dist2 = (diff**2).sum(-1)
    contact = (dist2 < cutoff**2) & ~np.eye(n, dtype=bool)
    blocks = -np.where(
        contact[..., None, None],
        diff[..., :, None] * diff[..., None, :] / np.where(dist2 > 0, dist2, 1)[..., None, None],
        0.0,
    )
    for i in range(n):
        blocks[i, i] = -blocks[i].sum(0)
    return blocks.transpose(0, 2, 1, 3).reshape(3 * n, 3 * n)


class ANM:
    """Normal modes of a structure and exact sampling of its overdamped Langevin dynamics."""

    def __init__(self, ca: np.ndarray, cutoff: float = 10.0, rmsf: float = 1.0, decorrelation_frames: float = 10.0):
        self.mean = np.asarray(ca, np.float64)
        values, vectors = np.linalg.eigh(anm_hessian(self.mean, cutoff))
        keep = values > 1e-6 * values.max()
        self.values, self.vectors = values[keep], vectors[:, keep]
        self.kt = rmsf**2 * len(ca) / np.sum(1 / self.values)  # mean squared fluctuation per residue = rmsf^2
        self.decay = np.exp(-self.values / self.values.min() / decorrelation_frames)

    def covariance(self) -> np.ndarray:
        """Exact stationary covariance kT H^+ (3L x 3L)."""
        return (self.vectors / self.values) @ self.vectors.T * self.kt

    def trajectory(self, frames: int, rng: np.random.Generator) -> np.ndarray:
        """``[frames, L, 3]`` started from the stationary distribution."""
        std = np.sqrt(self.kt / self.values)
        q = np.empty((frames, len(self.values)))
        q[0] = rng.normal(size=len(std)) * std
        noise = rng.normal(size=q.shape) * std * np.sqrt(1 - self.decay**2)
        for t in range(1, frames):
            q[t] = self.decay * q[t - 1] + noise[t]
        return self.mean + (q @ self.vectors.T).reshape(frames, -1, 3)


def spectral_sampler(train: np.ndarray, window: int, frames: int, rng: np.random.Generator) -> np.ndarray:
    """Independent Gaussian Fourier coefficients per band, residue and coordinate (variances from training windows)."""
    mean = train.mean(0)
    n_win = len(train) // window
    coeffs = np.fft.rfft((train[: n_win * window] - mean).reshape(n_win, window, -1, 3), axis=1)
    sd_re, sd_im = coeffs.real.std(0), coeffs.imag.std(0)
    out = []
    for _ in range(-(-frames // window)):
        c = rng.normal(size=sd_re.shape) * sd_re + 1j * rng.normal(size=sd_im.shape) * sd_im
        out.append(np.fft.irfft(c, n=window, axis=0))
    return mean + np.concatenate(out)[:frames]


def iid_sampler(train: np.ndarray, frames: int, rng: np.random.Generator) -> np.ndarray:
    """I.i.d. frames from per-atom 3-D Gaussians fitted to the training frames (flat spectrum)."""
    mean = train.mean(0)
    centred = train - mean
    cov = np.einsum("fai,faj->aij", centred, centred) / (len(train) - 1)
    chol = np.linalg.cholesky(cov + 1e-9 * np.eye(3))
    return mean + np.einsum("aij,faj->fai", chol, rng.normal(size=(frames,) + mean.shape))


def synthetic_checks(ca: np.ndarray, window: int, frames: int, replicates: int, gen_frames: int, seed: int) -> dict:
    """CFRE convergence to kT H^+ and spectral-vs-i.i.d. PCA-PSD-LogCorr on ANM trajectories of ``ca``."""
    from repro.papers.biodynaspec import metrics as M

    rng = np.random.default_rng(seed)
    anm = ANM(ca)
    reps = [anm.trajectory(frames, rng) for _ in range(replicates)]
    exact = anm.covariance()

    def cfre_exact(x):
        sample = np.cov(x.reshape(len(x), -1), rowvar=False)
        return float(np.linalg.norm(sample - exact) / np.linalg.norm(exact))

    train, test = np.concatenate(reps[:-1]), reps[-1]
    short = max(2 * window, frames // 4)
    spectral = [spectral_sampler(train, window, gen_frames, rng) for _ in range(4)]
    iid = [iid_sampler(train, gen_frames, rng) for _ in range(4)]
    return {
        "cfre_short": cfre_exact(reps[0][:short]),
        "short_frames": short,
        "cfre_all": cfre_exact(np.concatenate(reps)),
        "all_frames": frames * replicates,
        "logcorr_spectral": M.pca_psd_logcorr(test[:gen_frames], spectral, test),
        "logcorr_iid": M.pca_psd_logcorr(test[:gen_frames], iid, test),
        "rmwd_spectral": M.rmwd(test, np.concatenate(spectral)),
        "rmwd_iid": M.rmwd(test, np.concatenate(iid)),
    }
