"""Motion estimation and semi-Lagrangian extrapolation (numpy): the SL baseline and the teacher's target.

``lucas_kanade`` estimates one dense motion field per sequence from all consecutive pairs of past frames:
per pixel, least squares of grad(I) . V = -(I_t - I_(t-1)) over a Gaussian window (Tikhonov-regularised),
the frame model being I(r, t) = I(r - V, t - 1). ``extrapolate`` backtracks the last frame along that
motion for each lead time (repro.data.fields.simulators.semi_lagrangian).
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from repro.data.fields.simulators import semi_lagrangian


def lucas_kanade(past: np.ndarray, window: float, ridge: float) -> np.ndarray:
    """Motion (2, y, x) in pixels per frame, components (dx, dy), from past frames (time, y, x)."""
    sums = np.zeros((5,) + past.shape[1:])
    for prev, cur in zip(past[:-1], past[1:]):
        mid = 0.5 * (prev + cur)
        iy, ix = np.gradient(mid)
        it = cur - prev
        for k, term in enumerate((ix * ix, ix * iy, iy * iy, ix * it, iy * it)):
            sums[k] += ndimage.gaussian_filter(term, window, mode="wrap")
    a, b, c, d, e = sums
    a, c = a + ridge, c + ridge
    det = a * c - b * b
    u = (-c * d + b * e) / det
    v = (b * d - a * e) / det
    return np.stack([u, v])


def extrapolate(last: np.ndarray, motion: np.ndarray, leads: int) -> np.ndarray:
    """Frames (lead, y, x): the last frame backtracked along the motion for 1..leads frames."""
    return np.stack([semi_lagrangian(last, motion, steps=k) for k in range(1, leads + 1)])


def sl_forecasts(past: np.ndarray, leads: int, window: float, ridge: float) -> np.ndarray:
    """SL extrapolation (sample, lead, y, x) of every sequence of past frames (sample, time, y, x)."""
    return np.stack([extrapolate(p[-1], lucas_kanade(p, window, ridge), leads) for p in past])
