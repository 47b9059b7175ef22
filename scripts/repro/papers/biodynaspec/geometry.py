"""Rigid superposition (Kabsch) of C-alpha coordinate sets, batched over frames."""

from __future__ import annotations

import numpy as np


def kabsch_rotation(mobile: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Rotations ``[..., 3, 3]`` minimising ||mobile_c @ R - target_c|| for centred point sets ``[..., N, 3]``."""
    h = np.swapaxes(mobile, -1, -2) @ target
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(u @ vt))
    u[..., :, -1] *= d[..., None]
    return u @ vt


def superpose(mobile: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``mobile`` rigidly moved onto ``target`` (both ``[..., N, 3]``; broadcast over leading axes)."""
    mobile, target = np.asarray(mobile, np.float64), np.asarray(target, np.float64)
    mc, tc = mobile.mean(-2, keepdims=True), target.mean(-2, keepdims=True)
    rot = kabsch_rotation(mobile - mc, np.broadcast_to(target - tc, mobile.shape))
    return (mobile - mc) @ rot + tc


def rmsd_after_superposition(mobile: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per-frame RMSD ``[...]`` after optimal superposition of ``mobile`` on ``target``."""
    moved = superpose(mobile, target)
    return np.sqrt(((moved - np.asarray(target, np.float64)) ** 2).sum(-1).mean(-1))
