"""The rod simulator: analytic derivatives, the torch reference energy, Newton, multistability and the adjoint."""

import numpy as np
import pytest
import torch

from repro.papers.neural_control import unrolled
from repro.papers.neural_control.cases import buckled_start
from repro.papers.neural_control.rod import Rod, adjoint_vjp, equilibrium
from repro.papers.neural_control.tasks import branch


@pytest.fixture(scope="module")
def rod():
    return Rod(15)


@pytest.fixture(scope="module")
def start(rod):
    return buckled_start(rod, 0.1)


def bent(rod, seed=0):
    x = np.linspace(0, rod.length, rod.nodes)
    y = 0.05 * np.sin(np.pi * x) + 0.01 * np.random.default_rng(seed).normal(size=rod.nodes)
    return np.stack([x * 0.97, y], 1).ravel()


def central(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def test_gradient_and_hessian_match_finite_differences(rod):
    x = bent(rod)
    np.testing.assert_allclose(rod.gradient(x), central(rod.energy, x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(rod.hessian(x), central(rod.gradient, x), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(rod.curvature_jacobian(x), central(rod.curvature, x).T, rtol=1e-6, atol=1e-6)


def test_energy_equals_the_torch_reference(rod):
    x = bent(rod, 1)
    tx = torch.tensor(x, requires_grad=True)
    e = unrolled.energy(rod, tx)
    (g,) = torch.autograd.grad(e, tx)
    assert float(e.detach()) == pytest.approx(rod.energy(x), rel=1e-12)
    np.testing.assert_allclose(g.numpy(), rod.gradient(x), rtol=1e-10, atol=1e-10)


def test_straight_rod_at_rest_has_zero_energy(rod):
    z = np.array([0.0, 0.0, 0.0, rod.length, 0.0, 0.0])
    x = rod.assemble(rod.straight(z), z)
    assert rod.energy(x) == pytest.approx(0.0, abs=1e-20)


def test_newton_finds_the_upward_buckled_equilibrium(rod, start):
    xf, z = start
    assert np.max(np.abs(rod.gradient(rod.assemble(xf, z))[rod.free])) < 1e-8
    assert branch(rod, xf, z) == 1
    assert np.all(np.linalg.eigvalsh(rod.hessian(rod.assemble(xf, z))[rod.free, rod.free]) > 0)  # stable


def test_rotating_an_end_snaps_through_and_the_rod_stays_down(rod, start):
    """History dependence: the same clamp controls hold the rod up before and down after a snap-through."""
    xf, z = start
    up = branch(rod, xf, z)
    for _ in range(16):
        z = z + np.array([0, 0, 0, 0, 0, 0.06])
        xf = equilibrium(rod, z, xf).free
    assert branch(rod, xf, z) == -up
    for _ in range(16):
        z = z - np.array([0, 0, 0, 0, 0, 0.06])
        xf = equilibrium(rod, z, xf).free
    np.testing.assert_allclose(z, start[1], atol=1e-12)
    assert branch(rod, xf, z) == -up


def test_adjoint_equals_central_differences(rod, start):
    xf0, z0 = start
    z = z0 + np.array([0.0, 0.01, 0.02, -0.01, 0.0, 0.03])
    xs = equilibrium(rod, z, xf0, tol=1e-13, extra=2)
    v = np.random.default_rng(3).normal(size=xs.free.size)

    def response(zz):
        return v @ equilibrium(rod, zz, xs.free, tol=1e-13, extra=2).free

    np.testing.assert_allclose(adjoint_vjp(rod, xs.free, z, v), central(response, z), rtol=1e-6)


def test_unrolled_newton_gradient_converges_to_the_adjoint_and_costs_memory(rod, start):
    torch.set_default_dtype(torch.float64)
    xf0, z0 = start
    z = z0 + np.array([0.0, 0.01, 0.0, 0.0, -0.01, 0.02])
    v = torch.tensor(np.random.default_rng(5).normal(size=xf0.size))
    xs = equilibrium(rod, z, xf0, tol=1e-13, extra=2)
    adj, adj_bytes = unrolled.adjoint_gradient(rod, torch.tensor(xs.free), torch.tensor(z), v)
    short, short_bytes = unrolled.unrolled_gradient(rod, torch.tensor(xf0), torch.tensor(z), v, 3)
    long, long_bytes = unrolled.unrolled_gradient(rod, torch.tensor(xf0), torch.tensor(z), v, 12)
    np.testing.assert_allclose(long.numpy(), adj.numpy(), rtol=1e-8)
    np.testing.assert_allclose(adj.numpy(), adjoint_vjp(rod, xs.free, z, v.numpy()), rtol=1e-8)
    assert long_bytes == pytest.approx(4 * short_bytes, rel=0.05)
    assert adj_bytes < short_bytes / 2
