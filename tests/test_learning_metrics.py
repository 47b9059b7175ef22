"""Evaluation metrics against independent loop-based computations of their published definitions."""

from __future__ import annotations

import numpy as np
import pytest

from repro.metrics import learning as lm


def test_accuracy_from_labels_and_from_scores():
    y = np.array([0, 1, 2, 1])
    assert lm.accuracy(np.array([0, 1, 1, 1]), y) == 0.75
    scores = np.eye(3)[[0, 2, 2, 1]]
    assert lm.accuracy(scores, y) == 0.75
    assert np.isnan(lm.accuracy(np.array([], int), np.array([], int)))
    with pytest.raises(ValueError, match="shape"):
        lm.accuracy(np.zeros(3), y)


def test_group_and_worst_group_accuracy():
    y = np.array([0, 0, 0, 1, 1, 1])
    pred = np.array([0, 0, 1, 1, 0, 0])
    group = np.array([0, 0, 1, 2, 2, 3])
    assert lm.group_accuracy(pred, y, group) == {0: 1.0, 1: 0.0, 2: 0.5, 3: 0.0}
    assert lm.worst_group_accuracy(pred, y, group) == 0.0
    assert lm.worst_group_accuracy(pred, y, group, min_size=2) == 0.5


def reference(R: np.ndarray) -> tuple[float, float]:
    """BWT (Lopez-Paz & Ranzato 2017, eq. 2) and forgetting (Chaudhry et al. 2018, eq. 9) by explicit loops."""
    T = len(R)
    bwt = sum(R[T - 1][j] - R[j][j] for j in range(T - 1)) / (T - 1)
    forget = sum(max(R[k][j] for k in range(T - 1)) - R[T - 1][j] for j in range(T - 1)) / (T - 1)
    return bwt, forget


def test_backward_transfer_and_forgetting_match_their_definitions():
    rng = np.random.default_rng(0)
    for T in (2, 3, 5):
        R = np.tril(rng.random((T, T))) + np.triu(rng.random((T, T)), 1) * 0.1
        bwt, forget = reference(R.tolist())
        assert lm.backward_transfer(R) == pytest.approx(bwt)
        assert lm.forgetting(R) == pytest.approx(forget)
    # Hand example: task 0 learnt to 0.9, peaks 0.95 after task 1, ends at 0.6.
    R = np.array([[0.9, 0.1, 0.0], [0.95, 0.8, 0.2], [0.6, 0.7, 0.9]])
    assert lm.backward_transfer(R) == pytest.approx(((0.6 - 0.9) + (0.7 - 0.8)) / 2)
    assert lm.forgetting(R) == pytest.approx(((0.95 - 0.6) + (0.8 - 0.7)) / 2)
    assert lm.average_accuracy(R) == pytest.approx((0.6 + 0.7 + 0.9) / 3)
    assert lm.forward_transfer(R, np.array([0.1, 0.1, 0.1])) == pytest.approx(((0.1 - 0.1) + (0.2 - 0.1)) / 2)
    assert np.isnan(lm.forgetting(np.ones((1, 1))))
    with pytest.raises(ValueError, match="T x T"):
        lm.forgetting(np.ones((2, 3)))


def test_mae():
    assert lm.mae(np.array([1.0, 2.0, 4.0]), np.array([[1.0], [3.0], [1.0]])) == pytest.approx(4 / 3)
