"""scikit-survival models and their survival functions on a shared time grid.

sksurv survival functions are step functions on the model's own time points; they are read on the grid
as right-continuous steps (S = 1 before the first point), which needs the grid inside the follow-up range.
"""

from __future__ import annotations

import numpy as np

MODELS = ("coxph", "rsf", "gbsa")


def make_model(name: str, cfg: dict, seed: int):
    from sksurv.ensemble import GradientBoostingSurvivalAnalysis, RandomSurvivalForest
    from sksurv.linear_model import CoxPHSurvivalAnalysis

    if name == "coxph":
        return CoxPHSurvivalAnalysis(alpha=cfg["alpha"])
    if name == "rsf":
        return RandomSurvivalForest(random_state=seed, n_jobs=1, **cfg)
    if name == "gbsa":
        return GradientBoostingSurvivalAnalysis(random_state=seed, **cfg)
    raise ValueError(f"unknown model {name!r}; choose from {MODELS}")


def fit(name: str, cfg: dict, seed: int, x: np.ndarray, time: np.ndarray, event: np.ndarray):
    from sksurv.util import Surv

    return make_model(name, cfg, seed).fit(x, Surv.from_arrays(event=event, time=time))


def survival_on_grid(model, x: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """(rows, T) survival probabilities of ``model`` at the grid times."""
    values = model.predict_survival_function(x, return_array=True)
    idx = np.searchsorted(model.unique_times_, grid, side="right") - 1
    out = values[:, np.clip(idx, 0, None)]
    out[:, idx < 0] = 1.0
    return out


def time_grid(time: np.ndarray, event: np.ndarray, quantiles: tuple[float, float], size: int) -> np.ndarray:
    """Evenly spaced times between two quantiles of the observed event times (inside follow-up)."""
    low, high = np.quantile(time[event], quantiles)
    return np.linspace(low, high, size)
