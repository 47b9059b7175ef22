"""Motion estimation and semi-Lagrangian extrapolation (numpy): the SL baseline and the teacher's target.

``lucas_kanade`` estimates one dense motion field per sequence from all consecutive pairs of past frames:
per pixel, least squares of grad(I) . V = -(I_t - I_(t-1)) over a Gaussian window (Tikhonov-regularised),
the frame model being I(r, t) = I(r - V, t - 1). ``extrapolate`` backtracks the last frame along that
motion for each lead time (repro.data.fields.simulators.semi_lagrangian). On a periodic domain (the simulator)
filters and backtracking wrap around; on a radar domain (SEVIR, MeteoNet) they hold the edge value instead.
Missing pixels (NaN) count as no echo here. ``lowpass`` is the teacher's coarse-scale operator: the average
over ``TEACHER_POOL`` x ``TEACHER_POOL`` blocks.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from repro.data.fields.simulators import semi_lagrangian

TEACHER_POOL = 4


def lucas_kanade(past: np.ndarray, window: float, ridge: float, periodic: bool = True) -> np.ndarray:
    """Motion (2, y, x) in pixels per frame, components (dx, dy), from past frames (time, y, x)."""
    past = np.nan_to_num(np.asarray(past, dtype=np.float64), nan=0.0)
    mode = "wrap" if periodic else "nearest"
    sums = np.zeros((5,) + past.shape[1:])
    for prev, cur in zip(past[:-1], past[1:]):
        mid = 0.5 * (prev + cur)
        iy, ix = np.gradient(mid)
        it = cur - prev
        for k, term in enumerate((ix * ix, ix * iy, iy * iy, ix * it, iy * it)):
            sums[k] += ndimage.gaussian_filter(term, window, mode=mode)
    a, b, c, d, e = sums
    a, c = a + ridge, c + ridge
    det = a * c - b * b
    u = (-c * d + b * e) / det
    v = (b * d - a * e) / det
    return np.stack([u, v])


def extrapolate(last: np.ndarray, motion: np.ndarray, leads: int, periodic: bool = True) -> np.ndarray:
    """Frames (lead, y, x): the last frame backtracked along the motion for 1..leads frames."""
    last = np.nan_to_num(np.asarray(last, dtype=np.float64), nan=0.0)
    return np.stack([semi_lagrangian(last, motion, steps=k, periodic=periodic) for k in range(1, leads + 1)])


def motions(past: np.ndarray, window: float, ridge: float, periodic: bool = True) -> np.ndarray:
    """Lucas-Kanade motion (sample, 2, y, x) of every sequence of past frames (sample, time, y, x)."""
    return np.stack([lucas_kanade(p, window, ridge, periodic) for p in past])


def sl_from_motion(past: np.ndarray, motion: np.ndarray, leads: int, periodic: bool = True) -> np.ndarray:
    """SL extrapolation (sample, lead, y, x) of the last past frame along each sample's motion."""
    return np.stack([extrapolate(p[-1], m, leads, periodic) for p, m in zip(past, motion)]).astype(np.float32)


def sl_forecasts(past: np.ndarray, leads: int, window: float, ridge: float, periodic: bool = True) -> np.ndarray:
    """SL extrapolation (sample, lead, y, x) of every sequence of past frames (sample, time, y, x)."""
    return sl_from_motion(past, motions(past, window, ridge, periodic), leads, periodic)


def lowpass(fields: np.ndarray) -> np.ndarray:
    """Average over TEACHER_POOL x TEACHER_POOL blocks of the two trailing axes (the teacher's coarse scale)."""
    *lead, h, w = fields.shape
    k = TEACHER_POOL
    if h % k or w % k:
        raise ValueError(f"grid {h}x{w} is not divisible by the teacher's pool {k}")
    return fields.reshape(*lead, h // k, k, w // k, k).mean(axis=(-1, -3)).astype(np.float32)
