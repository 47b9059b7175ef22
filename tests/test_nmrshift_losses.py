"""The set loss: sorting equals optimal assignment for convex pair costs, and fails for concave ones."""

import numpy as np
import pytest
import torch
from scipy.optimize import linear_sum_assignment

from repro.papers.nmrshift.losses import (
    hungarian_set_loss,
    optimal_matching_cost,
    sorted_matching_cost,
    sorted_set_loss,
)

CONVEX = {"l1": np.abs, "l2": np.square, "huber": lambda d: np.where(d <= 1.0, 0.5 * d**2, d - 0.5)}


@pytest.mark.parametrize("name", sorted(CONVEX))
def test_sorted_cost_equals_linear_sum_assignment_on_random_sets(name):
    rng = np.random.default_rng(1)
    f = CONVEX[name]
    for _ in range(1000):
        n = int(rng.integers(1, 31))
        p, o = rng.normal(0, 3, n), rng.normal(0, 3, n)
        cost = f(np.abs(p[:, None] - o[None, :]))
        r, c = linear_sum_assignment(cost)
        assert abs(sorted_matching_cost(p, o, f) - cost[r, c].sum()) <= 1e-9


def test_concave_cost_breaks_the_identity():
    assert sorted_matching_cost([0, 1], [0.9, 2], np.sqrt) == pytest.approx(1.9487, abs=1e-4)
    assert optimal_matching_cost([0, 1], [0.9, 2], np.sqrt) == pytest.approx(1.7304, abs=1e-4)


def _padded(sets_p, sets_o):
    width = max(len(p) for p in sets_p) + 2
    pred = torch.zeros(len(sets_p), width, dtype=torch.float64)
    mask = torch.zeros(len(sets_p), width, dtype=torch.bool)
    obs = torch.full((len(sets_p), width), -7.0, dtype=torch.float64)
    for b, (p, o) in enumerate(zip(sets_p, sets_o)):
        slots = np.random.default_rng(b).permutation(width)[: len(p)]
        pred[b, slots] = torch.as_tensor(p)
        mask[b, slots] = True
        obs[b, : len(o)] = torch.as_tensor(o)
    return pred, mask, obs, torch.tensor([len(o) for o in sets_o])


@pytest.mark.parametrize("kind", ["l1", "l2", "huber"])
def test_torch_sorted_loss_matches_hungarian_loss_and_gradient(kind):
    rng = np.random.default_rng(2)
    sets_p = [rng.normal(0, 2, n) for n in (1, 5, 9)]
    sets_o = [rng.normal(0, 2, n) for n in (1, 5, 9)]
    pred, mask, obs, n_obs = _padded(sets_p, sets_o)
    a = pred.clone().requires_grad_(True)
    b = pred.clone().requires_grad_(True)
    la = sorted_set_loss(a, mask, obs, n_obs, kind)
    lb = hungarian_set_loss(b, mask, obs, n_obs, kind)
    torch.testing.assert_close(la, lb, rtol=0, atol=1e-12)
    la.sum().backward()
    lb.sum().backward()
    torch.testing.assert_close(a.grad, b.grad, rtol=0, atol=1e-12)


def test_set_loss_is_permutation_invariant_and_below_assigned_loss():
    rng = np.random.default_rng(3)
    p, o = rng.normal(0, 1, 12), rng.normal(0, 1, 12)
    pred, mask, obs, n = _padded([p], [o])
    base = sorted_set_loss(pred, mask, obs, n)
    perm_pred, perm_mask, perm_obs, _ = _padded([rng.permutation(p)], [rng.permutation(o)])
    torch.testing.assert_close(sorted_set_loss(perm_pred, perm_mask, perm_obs, n), base)
    assert float(base) <= np.abs(p - o).sum() + 1e-12
