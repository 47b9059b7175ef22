"""Group-robustness scores of test predictions (numpy only): shared by the train stage's table and the
evaluate stage's recomputation from the saved predictions."""

from __future__ import annotations

import numpy as np

from repro.metrics.learning import accuracy, group_accuracy, worst_group_accuracy


def scores(pred: np.ndarray, y: np.ndarray, bias: np.ndarray, group: np.ndarray, min_group: int) -> dict:
    groups = group_accuracy(pred, y, group)
    sizes = {g: int(np.sum(group == g)) for g in groups}
    kept = [a for g, a in groups.items() if sizes[g] >= min_group]
    return {
        "average": accuracy(pred, y),
        "worst_group": worst_group_accuracy(pred, y, group, min_size=min_group),
        "unbiased": float(np.mean(kept)) if kept else float("nan"),
        "conflicting": accuracy(pred[bias != y], y[bias != y]),
        "aligned": accuracy(pred[bias == y], y[bias == y]),
    }


def weight_shares(weights: np.ndarray, y: np.ndarray, bias: np.ndarray) -> dict:
    """Mean weight of bias-conflicting vs bias-aligned training samples, and the spread of the weights."""
    conflicting = bias != y
    return {
        "mean_conflicting": float(np.mean(weights[conflicting])) if conflicting.any() else float("nan"),
        "mean_aligned": float(np.mean(weights[~conflicting])),
        "std": float(np.std(weights)),
        "min": float(np.min(weights)),
        "mean": float(np.mean(weights)),
        "conflicting_share_of_mass": float(np.sum(weights[conflicting]) / np.sum(weights)),
        "conflicting_share_of_samples": float(np.mean(conflicting)),
    }
