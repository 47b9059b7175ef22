"""pai-graphon: saliency criteria, masks, graphons and NTK checked against independent computations."""

import numpy as np
import pytest
import torch
from torch.func import jacrev, vmap

from repro.papers.pai_graphon import criteria, graphon, model, ntk, train


@pytest.fixture()
def tiny_net():
    torch.manual_seed(0)
    weights = [w.double() for w in model.init_weights(5, 4, 1, seed=0)]
    x = torch.randn(7, 5, dtype=torch.float64)
    x[:, 4] = 0.0
    y = torch.tensor([0, 1, 1, 0, 1, 0, 1])
    return weights, x, y


def flat_loss(weights, x, y):
    shapes = [w.shape for w in weights]
    sizes = [w.numel() for w in weights]

    def f(theta):
        ws = [t.view(s) for t, s in zip(torch.split(theta, sizes), shapes)]
        return model.loss_fn(model.forward(ws, x), y)

    return f, torch.cat([w.flatten() for w in weights])


def test_snip_is_weight_times_finite_difference_gradient(tiny_net):
    weights, x, y = tiny_net
    f, theta = flat_loss(weights, x, y)
    eps = 1e-6
    fd = torch.stack(
        [(f(theta + eps * e) - f(theta - eps * e)) / (2 * eps) for e in torch.eye(len(theta), dtype=theta.dtype)]
    )
    snip = torch.cat([s.flatten() for s in criteria.scores("snip", weights, x, y, torch.Generator())])
    torch.testing.assert_close(snip, (theta * fd).abs(), atol=1e-7, rtol=1e-5)


def test_grasp_uses_the_full_hessian_vector_product(tiny_net):
    weights, x, y = tiny_net
    f, theta = flat_loss(weights, x, y)
    H = torch.autograd.functional.hessian(f, theta)
    g = torch.autograd.functional.jacobian(f, theta)
    grasp = torch.cat([s.flatten() for s in criteria.scores("grasp", weights, x, y, torch.Generator())])
    torch.testing.assert_close(grasp, theta * (H @ g), atol=1e-10, rtol=1e-8)  # kept-largest = -S


def test_zero_inputs_get_exactly_zero_data_driven_saliency(tiny_net):
    weights, x, y = tiny_net
    for criterion in ("snip", "grasp"):
        first = criteria.scores(criterion, weights, x, y, torch.Generator())[0]
        assert torch.all(first[:, 4] == 0)
        assert torch.any(first[:, :4] != 0)


def test_layer_masks_keep_the_top_scores_per_layer():
    gen = torch.Generator().manual_seed(0)
    scores = [torch.rand(30, 20, generator=gen), torch.rand(30, 30, generator=gen)]
    for m, s in zip(criteria.layer_masks(scores, 0.1), scores):
        k = round(0.1 * s.numel())
        assert int(m.sum()) == k
        assert s[m].min() >= s[~m].max()


def test_random_and_magnitude_degrees_are_binomial():
    weights = model.init_weights(64, 512, 1, seed=1)
    x, y = torch.randn(32, 64), torch.randint(0, 2, (32,))
    for criterion in ("random", "magnitude"):
        hidden = criteria.prune(criterion, weights, x, y, 0.1, seed=1)[0][1].numpy()
        ratio = graphon.degree_cv(hidden, 1) / graphon.binomial_cv(0.1, 512)
        assert abs(ratio - 1) < 4 * np.sqrt(1 / (2 * 512))


def test_binomial_cv_against_simulated_binomial():
    deg = np.random.default_rng(0).binomial(300, 0.2, size=200_000)
    assert graphon.binomial_cv(0.2, 300) == pytest.approx(deg.std() / deg.mean(), rel=0.01)


def test_block_average_against_loop():
    mask = np.random.default_rng(0).random((12, 8)) < 0.3
    g = graphon.block_average(mask, 4)
    ref = np.array([[mask[3 * i : 3 * i + 3, 2 * j : 2 * j + 2].mean() for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(g, ref)
    with pytest.raises(ValueError, match="not divisible"):
        graphon.block_average(mask, 5)


def test_degree_sorted_graphon_is_invariant_to_node_relabelling():
    i, j = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    mask = (i + 2 * j) < 96  # distinct degrees on both sides, so the degree order is unique
    rng = np.random.default_rng(1)
    shuffled = mask[rng.permutation(64)][:, rng.permutation(64)]
    np.testing.assert_array_equal(graphon.degree_sorted_graphon(shuffled, 8), graphon.degree_sorted_graphon(mask, 8))
    assert graphon.l2_distance(graphon.block_average(shuffled, 8), graphon.block_average(mask, 8)) > 0.1


def test_log_log_slope_of_a_power_law():
    widths = np.array([128, 256, 512, 1024])
    assert graphon.log_log_slope(widths, 3.0 * widths**-0.5) == pytest.approx(-0.5)


def test_jacobian_matches_functorch_reference():
    weights = model.init_weights(10, 16, 1, seed=2)
    x, y = torch.randn(12, 10), torch.randint(0, 2, (12,))
    masks = criteria.prune("snip", weights, x, y, 0.3, seed=2)[0]

    def f(ws, xi):
        return model.forward(list(ws), xi[None], masks)[0, 0]

    ref = torch.cat([j.reshape(12, -1) for j in vmap(jacrev(f), in_dims=(None, 0))(tuple(weights), x)], 1)
    torch.testing.assert_close(ntk.jacobian(weights, masks, x), ref, atol=1e-5, rtol=1e-5)


def test_alignment_formula_and_centering():
    rng = np.random.default_rng(3)
    A = torch.tensor(rng.standard_normal((9, 9)))
    K, y = A @ A.T, torch.tensor(rng.choice([-1.0, 1.0], 9), dtype=torch.float64)
    ref = float(torch.sum(K * torch.outer(y, y)) / (torch.linalg.norm(K) * torch.linalg.norm(torch.outer(y, y))))
    assert ntk.alignment(K, y) == pytest.approx(ref)
    shifted = K + 5.0 * torch.ones_like(K)
    torch.testing.assert_close(ntk.center(shifted), ntk.center(K))


def test_training_never_revives_pruned_weights():
    weights = model.init_weights(8, 16, 1, seed=4)
    X, y = torch.randn(64, 8), torch.randint(0, 2, (64,))
    masks = criteria.prune("magnitude", weights, X, y, 0.2, seed=4)[0]
    trained = train.train_masked(weights, masks, X, y, steps=20, batch=16, lr=0.01, seed=0)
    for w0, w1, m in zip(weights, trained, masks):
        assert torch.equal(w0[~m], w1[~m])
        assert not torch.equal(w0[m], w1[m])


def test_fsm_predicts_a_planted_rank_one_graphon():
    """Scores drawn from the FSM itself (latents a_i, b_j times i.i.d. noise): the predicted block graphon
    matches the planted one, and the degree-sorted mask approaches it as width grows."""
    from repro.papers.pai_graphon import fsm

    distances = []
    for width in (128, 512):
        rng = np.random.default_rng(width)
        a, b = np.exp(rng.normal(0, 0.5, width)), np.exp(rng.normal(0, 0.5, width))
        scores = np.outer(a, b) * np.abs(rng.standard_normal((width, width)))
        k = int(round(0.1 * scores.size))
        mask = np.zeros(scores.size, bool)
        mask[np.argsort(-scores.ravel())[:k]] = True
        mask = mask.reshape(scores.shape)
        predicted = fsm.predicted_graphon(scores, 0.1, 16)
        assert predicted.mean() == pytest.approx(0.1, rel=0.02)
        distances.append(graphon.l2_distance(graphon.degree_sorted_graphon(mask, 16), predicted))
    assert distances[1] < distances[0] < 0.03
    flat = fsm.predicted_graphon(np.abs(np.random.default_rng(0).standard_normal((256, 256))), 0.1, 16)
    assert np.max(np.abs(flat - 0.1)) < 0.02


def test_fsm_misses_scores_that_do_not_factorise():
    """Scores large only on one corner block (not a product of a row and a column scale): the FSM spreads the
    large latents over the whole rows and columns and its prediction misses the mask's graphon."""
    from repro.papers.pai_graphon import fsm

    rng = np.random.default_rng(1)
    width = 256
    corner = np.zeros((width, width))
    corner[: width // 4, : width // 4] = 1.0
    scores = (1 + 10 * corner) * np.abs(rng.standard_normal((width, width)))
    mask = scores >= np.quantile(scores, 0.9)
    distance = graphon.l2_distance(graphon.degree_sorted_graphon(mask, 16), fsm.predicted_graphon(scores, 0.1, 16))
    assert distance > 0.05
