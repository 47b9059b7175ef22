"""Atom-level and set-level losses; the set loss by sorting and, as a check, by optimal assignment.

For a pair cost l(x, y) = f(|x - y|) with f increasing and convex, the minimum over permutations
of sum_i l(s_i, p_sigma(i)) is reached by pairing both sets in sorted order (brief §3), so the set
loss costs one sort instead of a Hungarian assignment. Both are here so tests and the
``semi_hungarian`` baseline can confirm the identity numerically.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment

PAD = 1.0e6
HUBER_DELTA = 1.0


def pair_cost(diff: torch.Tensor, kind: str = "l1") -> torch.Tensor:
    """Convex, increasing f(|d|): 'l1', 'l2' or 'huber'."""
    if kind == "l1":
        return diff.abs()
    if kind == "l2":
        return diff.square()
    if kind == "huber":
        return torch.nn.functional.huber_loss(diff, torch.zeros_like(diff), reduction="none", delta=HUBER_DELTA)
    raise ValueError(f"unknown pair cost {kind!r}")


def _sorted_padded(values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    return torch.sort(torch.where(valid, values, torch.full_like(values, PAD)), dim=1).values


def sorted_set_loss(
    pred: torch.Tensor, mask: torch.Tensor, observed: torch.Tensor, n_observed: torch.Tensor, kind: str = "l1"
) -> torch.Tensor:
    """Per-molecule set loss [B]: predictions on ``mask`` atoms against the observed multiset, both sorted.

    ``pred``, ``mask``: [B, N]; ``observed``: [B, M] with the first ``n_observed[b]`` entries valid.
    Every molecule must have as many masked atoms as observed values (the filters guarantee it).
    """
    width = max(pred.shape[1], observed.shape[1])
    pred = torch.nn.functional.pad(pred, (0, width - pred.shape[1]))
    mask = torch.nn.functional.pad(mask, (0, width - mask.shape[1]))
    observed = torch.nn.functional.pad(observed, (0, width - observed.shape[1]))
    slots = torch.arange(width, device=pred.device)[None, :] < n_observed[:, None]
    p = _sorted_padded(pred, mask)
    o = _sorted_padded(observed, slots)
    return (pair_cost(p - o, kind) * slots).sum(dim=1)


def hungarian_set_loss(
    pred: torch.Tensor, mask: torch.Tensor, observed: torch.Tensor, n_observed: torch.Tensor, kind: str = "l1"
) -> torch.Tensor:
    """Same quantity as :func:`sorted_set_loss` via an explicit optimal assignment per molecule (scipy)."""
    losses = []
    for b in range(pred.shape[0]):
        p = pred[b][mask[b]]
        o = observed[b, : int(n_observed[b])]
        cost = pair_cost(p[:, None] - o[None, :], kind)
        rows, cols = linear_sum_assignment(cost.detach().cpu().numpy())
        losses.append(cost[torch.as_tensor(rows, device=cost.device), torch.as_tensor(cols, device=cost.device)].sum())
    return torch.stack(losses)


SET_LOSSES: dict[str, Callable[..., torch.Tensor]] = {"sort": sorted_set_loss, "hungarian": hungarian_set_loss}


def sorted_pairs(pred: np.ndarray, observed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The set metric's pairing (brief §6): sort both, pair in order."""
    pred, observed = np.sort(np.asarray(pred, float)), np.sort(np.asarray(observed, float))
    if pred.shape != observed.shape:
        raise ValueError(f"set sizes differ: {pred.size} predictions, {observed.size} observations")
    return pred, observed


def optimal_matching_cost(pred: np.ndarray, observed: np.ndarray, f: Callable[[np.ndarray], np.ndarray]) -> float:
    """min over permutations of sum f(|p_i - o_sigma(i)|), by scipy's linear_sum_assignment."""
    cost = f(np.abs(np.asarray(pred, float)[:, None] - np.asarray(observed, float)[None, :]))
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].sum())


def sorted_matching_cost(pred: np.ndarray, observed: np.ndarray, f: Callable[[np.ndarray], np.ndarray]) -> float:
    """sum f(|p_(i) - o_(i)|) over the sorted pairing."""
    p, o = sorted_pairs(pred, observed)
    return float(f(np.abs(p - o)).sum())
