"""DDG-SFDA's discretized density, refined pseudo-labels and compactness metric against direct computations."""

import math

import numpy as np
import torch

from repro.papers.sfda_regression.density import bin_centres, instance_histograms, neighbours, refine, soft_bins
from repro.papers.sfda_regression.evaluate import compactness


def test_soft_bins_are_distributions_peaked_at_the_value():
    values = torch.tensor([0.0, 0.31, 0.99, 1.4])
    h = soft_bins(values, 10)
    assert torch.all(h >= 0) and torch.allclose(h.sum(1), torch.ones(4))
    assert h[1].argmax() == 3 and h[2].argmax() == 9 and h[3].argmax() == 9


def test_neighbours_are_the_most_cosine_similar_other_rows():
    z = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [-1.0, 0.0]])
    idx = neighbours(z, 1)
    assert idx[:, 0].tolist() == [1, 0, 3, 2, 2]


def test_histogram_pools_neighbour_and_augmented_predictions():
    pred = torch.tensor([0.1, 0.12, 0.9, 0.88])
    aug = torch.tensor([[0.11, 0.1, 0.91, 0.9]])
    z = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    h = instance_histograms(pred, aug, z, bins=10, k=1)
    expected0 = (soft_bins(torch.tensor(0.12), 10) + soft_bins(torch.tensor(0.11), 10)) / 2
    assert torch.allclose(h[0], expected0)
    assert torch.allclose(h.sum(1), torch.ones(4))


def test_refined_labels_mix_and_weights_follow_entropy():
    bins = 5
    peaked = torch.zeros(bins)
    peaked[2] = 1.0
    flat = torch.full((bins,), 1.0 / bins)
    label, weight = refine(torch.tensor([0.9, 2.0]), torch.stack([peaked, flat]), mix=0.25)
    c = bin_centres(bins)
    assert math.isclose(float(label[0]), 0.25 * 0.9 + 0.75 * float(c[2]), rel_tol=1e-6)
    assert float(c[0]) <= float(label[1]) <= float(c[-1])
    assert math.isclose(float(weight[0]), 1.0, abs_tol=1e-6) and math.isclose(float(weight[1]), 0.0, abs_tol=1e-6)


def test_compactness_is_lower_for_features_ordered_by_target():
    rng = np.random.default_rng(0)
    y = rng.random(400)
    ordered = np.stack([y, y**2], 1) + 0.01 * rng.normal(size=(400, 2))
    scrambled = rng.normal(size=(400, 2))
    assert compactness(ordered, y, 10) < 0.05 < compactness(scrambled, y, 10)
    # the within/between ratio by hand for two bins
    feats = np.array([[0.0], [2.0], [10.0], [12.0]])
    assert math.isclose(compactness(feats, np.array([0.1, 0.2, 0.8, 0.9]), 2), 1.0 / 25.0)
