"""Evaluation of the digit papers: accuracy, per-group and worst-group accuracy, continual-learning
forgetting and backward transfer, mean absolute error. numpy only, so evaluate stages need no torch.

Continual-learning metrics read an accuracy matrix ``R`` with ``R[i, j]`` = accuracy on task j after
training on tasks 0..i (T x T). Definitions:
- average accuracy (Chaudhry et al. 2018): mean over j of R[T-1, j];
- backward transfer (Lopez-Paz & Ranzato 2017, GEM): BWT = mean over j < T-1 of R[T-1, j] - R[j, j]
  (negative = forgetting);
- forgetting (Chaudhry et al. 2018, RWalk): mean over j < T-1 of max_{l < T-1} R[l, j] - R[T-1, j];
- forward transfer (Lopez-Paz & Ranzato 2017): mean over j > 0 of R[j-1, j] - b[j], with b the accuracy
  of a model at random initialisation on task j.
"""

from __future__ import annotations

import numpy as np


def predicted_labels(pred: np.ndarray) -> np.ndarray:
    """Labels from class scores (N, K) by argmax, or labels (N,) unchanged."""
    pred = np.asarray(pred)
    return pred.argmax(axis=1) if pred.ndim == 2 else pred


def accuracy(pred: np.ndarray, y: np.ndarray) -> float:
    """Share of correct predictions (``pred``: labels or class scores); NaN for no samples."""
    labels, y = predicted_labels(pred), np.asarray(y)
    if labels.shape != y.shape:
        raise ValueError(f"predictions {labels.shape} and labels {y.shape} differ in shape")
    return float(np.mean(labels == y)) if len(y) else float("nan")


def group_accuracy(pred: np.ndarray, y: np.ndarray, group: np.ndarray) -> dict[int, float]:
    """Accuracy within each group present in ``group``, keyed by group id."""
    labels, y, group = predicted_labels(pred), np.asarray(y), np.asarray(group)
    if group.shape != y.shape:
        raise ValueError(f"groups {group.shape} and labels {y.shape} differ in shape")
    return {int(g): accuracy(labels[group == g], y[group == g]) for g in np.unique(group)}


def worst_group_accuracy(pred: np.ndarray, y: np.ndarray, group: np.ndarray, min_size: int = 1) -> float:
    """The lowest accuracy over groups with at least ``min_size`` samples (NaN when none qualifies)."""
    group = np.asarray(group)
    accs = [a for g, a in group_accuracy(pred, y, group).items() if np.sum(group == g) >= min_size]
    return float(np.min(accs)) if accs else float("nan")


def _square(R: np.ndarray) -> np.ndarray:
    R = np.asarray(R, dtype=float)
    if R.ndim != 2 or R.shape[0] != R.shape[1]:
        raise ValueError(f"the accuracy matrix must be T x T, got {R.shape}")
    return R


def average_accuracy(R: np.ndarray) -> float:
    """Mean accuracy over all tasks after training on the last one."""
    return float(np.mean(_square(R)[-1]))


def backward_transfer(R: np.ndarray) -> float:
    """BWT: mean over earlier tasks of (final accuracy - accuracy right after learning the task)."""
    R = _square(R)
    if len(R) < 2:
        return float("nan")
    return float(np.mean(R[-1, :-1] - np.diag(R)[:-1]))


def forgetting(R: np.ndarray) -> float:
    """Average forgetting: mean over earlier tasks of (best accuracy before the last task - final accuracy)."""
    R = _square(R)
    if len(R) < 2:
        return float("nan")
    best = np.max(R[:-1, :-1], axis=0)
    return float(np.mean(best - R[-1, :-1]))


def forward_transfer(R: np.ndarray, baseline: np.ndarray) -> float:
    """FWT: mean over later tasks of (accuracy before training on the task - the random-init baseline)."""
    R, baseline = _square(R), np.asarray(baseline, dtype=float)
    if baseline.shape != (len(R),):
        raise ValueError(f"baseline needs one accuracy per task ({len(R)}), got {baseline.shape}")
    if len(R) < 2:
        return float("nan")
    return float(np.mean(np.diag(R, k=1) - baseline[1:]))


def mae(pred: np.ndarray, target: np.ndarray) -> float:
    """Mean absolute error."""
    pred, target = np.asarray(pred, dtype=float).reshape(-1), np.asarray(target, dtype=float).reshape(-1)
    if pred.shape != target.shape:
        raise ValueError(f"predictions {pred.shape} and targets {target.shape} differ in size")
    return float(np.mean(np.abs(pred - target))) if len(pred) else float("nan")
