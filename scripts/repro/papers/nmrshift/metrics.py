"""The paper's metrics (brief §6): pooled per-atom MAE/RMSE/R2 and the sorted set metric L_mol."""

from __future__ import annotations

import numpy as np

from repro.metrics.regression import mae, r2, rmse
from repro.papers.nmrshift.losses import sorted_pairs


def pooled(pred: np.ndarray, true: np.ndarray) -> dict[str, float]:
    """Micro-averaged MAE, RMSE and R2 over all evaluated atoms."""
    pred, true = np.asarray(pred, float), np.asarray(true, float)
    return {"mae": mae(pred, true), "rmse": rmse(pred, true), "r2": r2(pred, true), "n_atoms": int(pred.size)}


def set_pairs(preds: list[np.ndarray], observed: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per molecule: sort predictions and observations, pair in order; concatenated over molecules."""
    pairs = [sorted_pairs(p, o) for p, o in zip(preds, observed)]
    if not pairs:
        return np.empty(0), np.empty(0)
    return np.concatenate([p for p, _ in pairs]), np.concatenate([o for _, o in pairs])
