"""Independent Windowed Fourier Decomposition (IWFD).

``windowed_rfft`` cuts a signal ``[T, ...]`` into windows of ``W`` samples every ``hop``
samples, multiplies by an analysis window and takes a real DFT over time independently for
every residue coordinate; ``inverse_windowed_rfft`` inverts it exactly by weighted
overlap-add (each sample is the window-weighted least-squares combination of every
window covering it), which is exact whenever every sample is covered by a non-zero weight.
The model uses rectangular windows with ``hop == W`` (anchored, non-overlapping), where
overlap-add reduces to concatenation.

``anchored_windows`` is the model's view of a trajectory: window ``w`` holds the ``W``
frames after anchor frame ``w * W`` (the last frame of the previous window), Kabsch-aligned
on the anchor, as displacements from it; ``compose_windows`` chains them back.
"""

from __future__ import annotations

import numpy as np

from repro.papers.biodynaspec.geometry import superpose


def analysis_window(kind: str, size: int) -> np.ndarray:
    """The taper applied before the DFT: 'boxcar' (the model's) or 'hamming' (never zero)."""
    if kind == "boxcar":
        return np.ones(size)
    if kind == "hamming":
        return np.hamming(size)
    raise ValueError(f"unknown window {kind!r}")


def window_starts(n: int, size: int, hop: int) -> np.ndarray:
    if n < size:
        raise ValueError(f"signal of {n} samples is shorter than one window ({size})")
    starts = np.arange(0, n - size + 1, hop)
    if starts[-1] + size < n:
        starts = np.append(starts, n - size)
    return starts


def windowed_rfft(x: np.ndarray, size: int, hop: int | None = None, window: str = "boxcar") -> np.ndarray:
    """Complex coefficients ``[n_windows, size // 2 + 1, ...]`` of ``x [T, ...]``."""
    hop = hop or size
    taper = analysis_window(window, size).reshape((size,) + (1,) * (x.ndim - 1))
    segments = np.stack([x[s : s + size] * taper for s in window_starts(len(x), size, hop)])
    return np.fft.rfft(segments, axis=1)


def inverse_windowed_rfft(
    coeffs: np.ndarray, n: int, size: int, hop: int | None = None, window: str = "boxcar"
) -> np.ndarray:
    """Exact inverse of :func:`windowed_rfft` for a signal of ``n`` samples (weighted overlap-add)."""
    hop = hop or size
    taper = analysis_window(window, size)
    segments = np.fft.irfft(coeffs, n=size, axis=1)
    out = np.zeros((n,) + segments.shape[2:])
    weight = np.zeros(n)
    shape = (size,) + (1,) * (segments.ndim - 2)
    for segment, start in zip(segments, window_starts(n, size, hop), strict=True):
        out[start : start + size] += segment * taper.reshape(shape)
        weight[start : start + size] += taper**2
    if (weight <= 0).any():
        raise ValueError("some samples are not covered by a non-zero window weight; not invertible")
    return out / weight.reshape((n,) + (1,) * (out.ndim - 1))


def anchored_windows(ca: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Anchors ``[n_win, L, 3]`` and aligned displacements ``[n_win, size, L, 3]`` of a trajectory ``[T, L, 3]``.

    Window ``w`` covers frames ``w*size + 1 .. (w+1)*size`` after anchor frame ``w*size``.
    """
    n_win = (len(ca) - 1) // size
    anchors = ca[np.arange(n_win) * size]
    frames = np.stack([ca[w * size + 1 : (w + 1) * size + 1] for w in range(n_win)])
    aligned = superpose(frames, anchors[:, None])
    return anchors, aligned - anchors[:, None]


def compose_windows(anchor: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """Chain generated windows: frames ``[1 + n_win*size, L, 3]`` starting at ``anchor``.

    Each window's displacements are added to its anchor, the last frame of the previous window.
    """
    frames = [anchor[None]]
    for delta in deltas:
        frames.append(frames[-1][-1][None] + delta)
    return np.concatenate(frames)


def window_spectrum(delta: np.ndarray) -> np.ndarray:
    """Real features ``[..., K, L, 6]`` (Re, Im of x, y, z) of displacement windows ``[..., W, L, 3]``."""
    coeffs = np.fft.rfft(delta, axis=-3)
    return np.concatenate([coeffs.real, coeffs.imag], axis=-1)


def spectrum_to_window(features: np.ndarray, size: int) -> np.ndarray:
    """Inverse of :func:`window_spectrum`: displacements ``[..., W, L, 3]``."""
    coeffs = features[..., :3] + 1j * features[..., 3:]
    return np.fft.irfft(coeffs, n=size, axis=-3)
