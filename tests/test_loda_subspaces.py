"""LoDA's subspaces, recalibration, LoRA merging and GAO step against independent computations."""

import numpy as np
import scipy.linalg
import torch

from repro.papers.loda import subspaces as sp
from repro.papers.loda.gao import GAOOptimizer, gao_loss
from repro.papers.loda.lora import layer_inputs, wrap_linears


def moments(d=7, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(200, d, generator=g, dtype=torch.float64)
    b = torch.randn(150, d, generator=g, dtype=torch.float64) @ torch.diag(
        torch.linspace(0.1, 2.0, d, dtype=torch.float64)
    )
    return sp.second_moment(a * torch.linspace(2.0, 0.05, d, dtype=torch.float64)), sp.second_moment(b)


def test_isolated_basis_matches_scipy_generalised_eigenvectors():
    s_old, s_new = moments()
    u = sp.isolated_basis(s_old, s_new, 3, eps=1e-3)
    reg = sp.ridge(s_old, 1e-3).numpy()
    _, vecs = scipy.linalg.eigh(s_new.numpy(), reg)
    assert np.max(scipy.linalg.subspace_angles(u.numpy(), vecs[:, -3:])) < 1e-8
    np.testing.assert_allclose(u.norm(dim=0).numpy(), 1.0)
    # it maximises the Rayleigh ratio: no random unit direction beats its first column
    ratio = lambda v: float(v @ s_new @ v) / float(v @ sp.ridge(s_old, 1e-3) @ v)  # noqa: E731
    best = ratio(u[:, 0])
    rand = torch.randn(500, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    assert all(ratio(v) <= best + 1e-9 for v in rand)


def test_general_basis_is_orthonormal_and_holds_the_most_joint_energy():
    s_old, s_new = moments()
    u = sp.general_basis(s_old, s_new, 3)
    np.testing.assert_allclose((u.T @ u).numpy(), np.eye(3), atol=1e-12)
    vals = np.linalg.eigvalsh((s_old + s_new).numpy())
    np.testing.assert_allclose(sp.energy(u, s_old + s_new), vals[-3:].sum(), rtol=1e-10)


def test_null_space_bases_avoid_the_old_input_space():
    g = torch.Generator().manual_seed(0)
    old_dirs = torch.linalg.qr(torch.randn(6, 2, generator=g, dtype=torch.float64)).Q
    s_old = old_dirs @ torch.diag(torch.tensor([3.0, 1.0], dtype=torch.float64)) @ old_dirs.T
    _, s_new = moments(6)
    u = sp.null_space_basis(s_old, s_new, 2, threshold=0.99)
    assert float((old_dirs.T @ u).abs().max()) < 1e-10
    assert sp.energy(u, s_old) < 1e-10


def test_recalibration_solves_the_weighted_least_squares_problem():
    s_old, s_new = moments(5)
    g = torch.Generator().manual_seed(3)
    a = torch.linalg.qr(torch.randn(5, 2, generator=g, dtype=torch.float64)).Q.T
    b = torch.randn(4, 2, generator=g, dtype=torch.float64)
    m, rhs = sp.recalibration_system(b, a, s_old, s_new, 0.3)
    lam = sp.recalibrate(m, rhs)

    def objective(x):
        d_new = b @ torch.diag(x - 1.0) @ a
        d_old = b @ torch.diag(x) @ a
        return 0.7 * torch.trace(d_old @ s_old @ d_old.T) + 0.3 * torch.trace(d_new @ s_new @ d_new.T)

    best = float(objective(lam))
    for step in torch.randn(50, 2, generator=g, dtype=torch.float64) * 0.05:
        assert float(objective(lam + step)) >= best - 1e-12
    # with equal weights on identical moments the optimum is half the update
    m2, r2 = sp.recalibration_system(b, a, s_new, s_new, 0.5)
    np.testing.assert_allclose(sp.recalibrate(m2, r2).numpy(), 0.5, atol=1e-10)


def test_lora_branches_start_silent_and_merge_exactly():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3))
    x = torch.randn(10, 5)
    before = net(x).detach()
    layers = wrap_linears(net)
    assert set(layers) == {"0", "2"}
    g = torch.Generator().manual_seed(0)
    for layer in layers.values():
        layer.add_branch("general", torch.eye(layer.base.weight.shape[1])[:2], 2, g)
        layer.add_branch("lora", None, 2, g)
    assert torch.allclose(net(x), before)
    seen = layer_inputs(net, layers, x)
    assert seen["0"].shape == (10, 5) and seen["2"].shape == (10, 4)
    for layer in layers.values():
        torch.nn.init.normal_(layer.ups["general"])
        torch.nn.init.normal_(layer.ups["lora"])
    with_branches = net(x).detach()
    scale = {"general": torch.tensor([0.5, 2.0])}
    expected = {
        n: m.base.weight + (m.ups["general"] * scale["general"]) @ m.downs["general"] + m.ups["lora"] @ m.downs["lora"]
        for n, m in layers.items()
    }
    for name, layer in layers.items():
        layer.merge(scale)
        assert torch.allclose(layer.base.weight, expected[name].detach())
        assert len(layer.downs) == 0
    assert not torch.allclose(net(x), with_branches)


def test_gao_step_uses_the_first_half_gradient_at_the_perturbed_point():
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.randn(3))
    x, y = torch.randn(8, 3), torch.randn(8)

    def crit(model, xb, yb):
        return ((xb @ w - yb) ** 2).mean()

    opt = GAOOptimizer(torch.optim.SGD([w], lr=0.1), [w], rho_max=0.5)
    start = w.detach().clone()
    torch.manual_seed(7)
    loss = gao_loss(opt, crit)(None, (x, y))
    loss.backward()
    opt.step()
    torch.manual_seed(7)
    rho = float(torch.rand(())) * 0.5
    probe = start.clone().requires_grad_()
    g2 = torch.autograd.grad(((x[4:] @ probe - y[4:]) ** 2).mean(), [probe])[0]
    point = (start + rho * g2 / g2.norm()).requires_grad_()
    g1 = torch.autograd.grad(((x[:4] @ point - y[:4]) ** 2).mean(), [point])[0]
    torch.testing.assert_close(w.detach(), start - 0.1 * g1)


def test_the_ablation_without_the_general_branch_keeps_the_total_adapter_rank():
    """loda_no_general gives the general branch's rank to the isolated one: the ablation compares equal ranks."""
    import copy

    from repro.learning.smallnets import MLP
    from repro.papers.loda.continual import ContinualRun

    torch.manual_seed(0)
    backbone = MLP(6, [5], 3)
    x = torch.randn(40, 6)
    lora = {"rank_general": 2, "rank_isolated": 1, "eps": 1e-3, "null_threshold": 0.95}
    ranks = {}
    for method in ("loda", "loda_no_general"):
        run = ContinualRun(copy.deepcopy(backbone), method, lora, 0, x)
        run._branches(0, torch.randn(40, 6), torch.Generator().manual_seed(0))
        ranks[method] = {n: {b: a.shape[0] for b, a in layer.downs.items()} for n, layer in run.layers.items()}
    for layer in ranks["loda"]:
        assert ranks["loda"][layer] == {"general": 2, "isolated": 1}
        assert ranks["loda_no_general"][layer] == {"isolated": 3}


def test_a_memoised_basis_equals_a_fresh_computation():
    rng = np.random.default_rng(5)
    a, b = (torch.as_tensor(rng.normal(size=(40, 6))) for _ in range(2))
    s_old, s_new = sp.second_moment(a), sp.second_moment(b)
    first = sp.isolated_basis(s_old, s_new, 2, 1e-3)
    sp._CACHE.clear()
    fresh = sp.isolated_basis(s_old, s_new, 2, 1e-3)
    again = sp.isolated_basis(s_old.clone(), s_new.clone(), 2, 1e-3)
    assert torch.equal(first, fresh) and torch.equal(fresh, again)
    assert not torch.equal(sp.isolated_basis(s_old, s_new + 1e-3, 2, 1e-3), fresh)
