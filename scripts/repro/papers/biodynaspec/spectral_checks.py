"""Exact properties of IWFD measured on real trajectories (the checks among the claims).

``generator_path_errors`` runs the generator's own path on a real trajectory: anchored windows ->
window spectrum -> slot scaling and float32 (what the network emits) -> inverse spectrum -> compose;
the error it reports is the floor any generated trajectory inherits from the representation.
"""

from __future__ import annotations

import numpy as np

from repro.papers.biodynaspec.data import from_slots, slot_scales, to_slots
from repro.papers.biodynaspec.geometry import rmsd_after_superposition, superpose
from repro.papers.biodynaspec.iwfd import anchored_windows, inverse_windowed_rfft, windowed_rfft
from repro.papers.biodynaspec.metrics import r_s_curve


def reconstruction_error(ca: np.ndarray, window: int, hop: int, taper: str = "boxcar") -> float:
    """Max |x - IWFD^-1(IWFD(x))| in Angstrom for a float32 trajectory ``[T, L, 3]``."""
    x = np.asarray(ca, np.float32)
    back = inverse_windowed_rfft(windowed_rfft(x, window, hop, taper), len(x), window, hop, taper)
    return float(np.abs(back - x).max())


def parseval_deviation(delta: np.ndarray) -> float:
    """Max relative gap between sum_t |x_t|^2 and the one-sided spectral energy, over windows ``[n, W, L, 3]``."""
    size = delta.shape[1]
    coeffs = np.fft.rfft(delta, axis=1)
    weights = np.full(coeffs.shape[1], 2.0)
    weights[0] = 1.0
    if size % 2 == 0:
        weights[-1] = 1.0
    time_energy = (delta**2).sum(axis=(1, 2, 3))
    spec_energy = (weights[None, :, None, None] * np.abs(coeffs) ** 2).sum(axis=(1, 2, 3)) / size
    return float(np.max(np.abs(time_energy - spec_energy) / np.maximum(time_energy, 1e-300)))


def band_truncation_errors(delta: np.ndarray) -> np.ndarray:
    """RMS reconstruction error keeping the lowest K bands, K = 1..W//2+1 (must never increase)."""
    size = delta.shape[1]
    coeffs = np.fft.rfft(delta, axis=1)
    errors = []
    for k in range(1, coeffs.shape[1] + 1):
        kept = coeffs.copy()
        kept[:, k:] = 0
        errors.append(np.sqrt(np.mean((np.fft.irfft(kept, n=size, axis=1) - delta) ** 2)))
    return np.array(errors)


def generator_path_errors(ca: np.ndarray, window: int) -> dict[str, float]:
    """Errors (Angstrom) of the generator's path on a real trajectory ``[T, L, 3]`` against the trajectory itself.

    ``window_roundtrip``: largest |displacement - decoded displacement| (spectrum, scaling, float32);
    ``composed_max``: largest coordinate error of the composed trajectory after per-frame superposition;
    ``composed_rmsd_max``: largest per-frame RMSD after superposition (what R_s measures); ``composed_r_s``:
    R_s of the reconstruction. As in generation, each window's frames are expressed relative to the anchor
    the generator sees, the last composed frame (Kabsch-aligned onto it), then go through the spectrum, the
    slot scaling and float32 and back, and are added to that anchor: the composed trajectory must equal the
    true one frame by frame up to rigid motions.
    """
    ca = np.asarray(ca, np.float64)
    _, reference = anchored_windows(ca, window)
    scales = slot_scales(to_slots(reference, "spectral"))
    anchor, composed, roundtrip = ca[0], [ca[0][None]], 0.0
    for w in range((len(ca) - 1) // window):
        frames = ca[w * window + 1 : (w + 1) * window + 1]
        delta = superpose(frames, anchor[None]) - anchor
        emitted = (to_slots(delta, "spectral") / scales[:, None, None]).astype(np.float32)
        decoded = from_slots(emitted.astype(np.float64) * scales[:, None, None], "spectral", window)
        roundtrip = max(roundtrip, float(np.abs(decoded - delta).max()))
        composed.append(anchor + decoded)
        anchor = composed[-1][-1]
    composed = np.concatenate(composed)
    true = ca[: len(composed)]
    rmsd = rmsd_after_superposition(composed, true)
    return {
        "window_roundtrip_A": roundtrip,
        "composed_max_A": float(np.abs(superpose(composed, true) - true).max()),
        "composed_rmsd_max_A": float(rmsd.max()),
        "composed_r_s_A": float(r_s_curve(composed, true)[-1]),
        "frames": int(len(composed)),
    }


def check_trajectory(ca: np.ndarray, window: int) -> dict[str, float]:
    """All exact-property numbers for one trajectory."""
    _, delta = anchored_windows(np.asarray(ca, np.float64), window)
    trunc = band_truncation_errors(delta)
    return {
        "generator_path": generator_path_errors(ca, window),
        "iwfd_max_error_boxcar_A": reconstruction_error(ca, window, window),
        "iwfd_max_error_hamming_half_hop_A": reconstruction_error(ca, window, window // 2, "hamming"),
        "parseval_max_rel_dev": parseval_deviation(delta),
        "truncation_max_increase_A": float(np.max(np.diff(trunc))) if len(trunc) > 1 else 0.0,
        "truncation_errors_A": trunc.tolist(),
    }
