"""Geo-NeW-lite's distinctive properties: partition of unity, monotone flux, exact coarse conservation through
Whitney edge fluxes, implicit-function-theorem gradients, and bit-for-bit resumable training."""

import dataclasses

import numpy as np
import pytest
import torch
from test_geo_newf_fem import SETTINGS

from repro.papers.geo_newf import fem
from repro.papers.geo_newf.meshes import make_sample
from repro.papers.geo_newf.model import GeoNeW, Regression, edge_fluxes, make_batch, relative_l2
from repro.papers.geo_newf.train import fit

MODEL = {"width": 16, "heads": 2, "layers": 1, "coarse": 9, "ridges": 4, "eps": 0.1, "tol": 1e-11, "max_iter": 30}


@pytest.fixture(autouse=True)
def float64():
    torch.set_default_dtype(torch.float64)


@pytest.fixture(scope="module")
def samples():
    rng = np.random.default_rng(0)
    return [dataclasses.asdict(make_sample("square", 0.1, SETTINGS, rng)) for _ in range(4)]


@pytest.fixture
def model():
    torch.manual_seed(0)
    return GeoNeW(**MODEL)


def test_partition_of_unity_respects_dirichlet_nodes(model, samples):
    batch = make_batch(samples)
    w, _ = model.weights(batch)
    np.testing.assert_allclose(w.sum(1).detach().numpy(), 1.0, atol=1e-14)
    assert torch.all(w >= 0)
    d = batch.dirichlet.bool()
    assert torch.all(w[:, 1:][d[:, None].expand_as(w[:, 1:])] == 0) and torch.all(w[:, 0][d] == 1)


def test_flux_is_the_gradient_of_its_potential_with_a_positive_definite_jacobian(model):
    latent = torch.randn(2, MODEL["width"])
    p = model.flux.params(latent)
    g = (3 * torch.randn(2, 50, 2)).requires_grad_(True)
    (dphi,) = torch.autograd.grad(model.flux.potential(g, p).sum(), g)
    np.testing.assert_allclose(model.flux.flux(g, p).detach().numpy(), dphi.numpy(), rtol=1e-10, atol=1e-12)
    jac = model.flux.jacobian(g.detach(), p).detach()
    auto = torch.func.vmap(torch.func.jacrev(lambda x: model.flux.flux(x[None, None], tuple(t[:1] for t in p))[0, 0]))
    np.testing.assert_allclose(jac[0].numpy(), auto(g.detach()[0]).detach().numpy(), rtol=1e-10, atol=1e-12)
    assert torch.linalg.eigvalsh(jac).min() >= MODEL["eps"] - 1e-12


def test_newton_solves_the_coarse_problem_and_whitney_fluxes_conserve(model, samples):
    batch = make_batch(samples)
    with torch.no_grad():
        sol = model(batch)
        fluxes = edge_fluxes(model, batch, sol)
    assert torch.all(sol.converged)
    scale = sol.load.abs().amax(-1, keepdim=True)
    assert torch.all(sol.residual.abs() <= 1e-10 * scale)
    np.testing.assert_allclose(fluxes.numpy(), -fluxes.transpose(1, 2).numpy(), atol=1e-15)  # antisymmetric
    whitney = fluxes.sum(1)[:, 1:] - sol.load
    np.testing.assert_allclose(whitney.numpy(), sol.residual.numpy(), atol=1e-12 * float(scale.max()))
    # Galerkin residual equals the fine P1 residual of the learned law projected with the weights
    assert torch.all(sol.iterations <= MODEL["max_iter"])


def test_coarse_solution_solves_the_projected_fine_problem(model, samples):
    """R_i = sum_a W_ia r_a(u_c): the coarse equations are the fine balance of the learned law, aggregated."""
    batch = make_batch(samples[:1])
    with torch.no_grad():
        sol = model(batch)
        w, latent = model.weights(batch)
        p = model.flux.params(latent)
    s = samples[0]
    grads, area = fem.p1_geometry(s["nodes"], s["cells"])
    u = sol.u[0].numpy()
    g = np.einsum("ma,mad->md", u[s["cells"]], grads)
    with torch.no_grad():
        q = model.flux.flux(torch.as_tensor(g)[None], p)[0].numpy()
    local = area[:, None] * np.einsum("md,mad->ma", q, grads)
    r = np.bincount(s["cells"].ravel(), local.ravel(), minlength=len(u)) - s["load"]
    np.testing.assert_allclose(w[0, 1:].numpy() @ r, sol.residual[0].numpy(), atol=1e-12)


def test_implicit_gradient_equals_finite_differences(model, samples):
    batch = make_batch(samples[:2])

    def loss():
        return relative_l2(model(batch).u, batch.u, batch.mass).pow(2).mean()

    param = model.flux.to_s.bias
    model.zero_grad()
    loss().backward()
    analytic = param.grad[0].item()
    with torch.no_grad():
        param[0] += 1e-6
        up = loss().item()
        param[0] -= 2e-6
        down = loss().item()
        param[0] += 1e-6
    assert analytic == pytest.approx((up - down) / 2e-6, rel=1e-5)


def test_regression_baseline_is_zero_on_dirichlet_nodes(samples):
    torch.manual_seed(0)
    batch = make_batch(samples)
    u = Regression(16, 2, 1)(batch)
    assert torch.all(u[batch.dirichlet.bool()] == 0)


def test_relative_l2_matches_the_numpy_metric(samples):
    batch = make_batch(samples[:1])
    s = samples[0]
    u = s["u"] + 0.1 * np.sin(s["nodes"][:, 0])
    expected = fem.relative_l2(u, s["u"], fem.mass_matrix(s["nodes"], s["cells"]))
    assert relative_l2(torch.as_tensor(u)[None], batch.u, batch.mass).item() == pytest.approx(expected, rel=1e-12)


TRAIN = {"epochs": 4, "batch": 2, "lr": 0.003, "grad_clip": 1.0, "checkpoint_every": 1}


def test_interrupted_training_resumes_bit_for_bit(samples, tmp_path, monkeypatch):
    settings = {"model": {"geonew": MODEL}, "train": {"geonew": TRAIN}}
    data = make_batch(samples)
    straight = fit("geonew", data, settings, 3)
    ckpt = tmp_path / "run.ckpt"
    calls = {"n": 0}
    original = data.subset

    def failing_subset(idx):
        calls["n"] += 1
        if calls["n"] == 5:  # inside epoch 2 (two batches per epoch)
            raise KeyboardInterrupt
        return original(idx)

    monkeypatch.setattr(data, "subset", failing_subset)
    with pytest.raises(KeyboardInterrupt):
        fit("geonew", data, settings, 3, ckpt)
    monkeypatch.setattr(data, "subset", original)
    resumed = fit("geonew", data, settings, 3, ckpt)
    for key, value in straight["state"].items():
        assert torch.equal(value, resumed["state"][key]), key
