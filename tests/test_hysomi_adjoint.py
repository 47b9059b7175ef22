"""The numpy RK4 solve and its discrete adjoint equal the torch solver and autograd through it, to round-off."""

import pytest
import torch

from repro.papers.hysomi import adjoint
from repro.papers.hysomi.soil_model import PARAMS, Bounds, fastest_rate, simulate

TIMES = [0, 1, 2, 4, 4, 7, 10, 14, 21, 28]  # 4 twice: a repeated time's gradients add up
X0 = torch.tensor([20.0, 0.1, 0.4, 0.01, 0.0], dtype=torch.float64)


@pytest.fixture(scope="module")
def bounds(repo):
    return Bounds.from_yaml(repo / "resources/hysomi/constraints.yaml")


def _inputs(bounds, members: int, samples: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Initial states (samples, 5) and parameters (members, samples, 8), both requiring gradients."""
    gen = torch.Generator().manual_seed(seed)
    x0 = X0 * (0.5 + torch.rand(samples, 5, generator=gen, dtype=torch.float64))
    theta = bounds.from_unit(torch.rand(members, samples, len(PARAMS), generator=gen, dtype=torch.float64))
    return x0.requires_grad_(), theta.requires_grad_()


def test_forward_and_gradients_equal_autograd_through_the_torch_solver(bounds):
    x0, theta = _inputs(bounds, members=3, samples=20)
    dt = 1.0
    weight = torch.randn(3, 20, len(TIMES), 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    results = []
    for solve in (simulate, adjoint.simulate):
        traj = solve(x0.expand(3, -1, -1), theta, TIMES, dt, bounds.f_s)
        results.append((traj, *torch.autograd.grad((traj * weight).sum(), (x0, theta))))
    fastest = max(fastest_rate(results[0][0][..., i, :], theta) for i in range(len(TIMES)))
    assert dt * fastest > 2, "no substeps: the test would miss them"
    for ours, ref in zip(results[1], results[0]):
        assert ours.shape == ref.shape
        torch.testing.assert_close(ours, ref, rtol=1e-12, atol=1e-13 * ref.abs().max().item())


def test_gradcheck_against_finite_differences(bounds):
    x0, theta = _inputs(bounds, members=2, samples=2, seed=2)
    assert torch.autograd.gradcheck(
        lambda x, t: adjoint.simulate(x, t, [0, 1, 3], 1.0, bounds.f_s), (x0, theta), eps=1e-7, atol=1e-6, rtol=1e-5
    )


def test_total_carbon_and_its_gradient_are_conserved(bounds):
    """Total carbon is constant along every trajectory, so its gradient is 1 for every initial pool and 0 for
    every parameter: the adjoint carries the linear invariant too."""
    x0, theta = _inputs(bounds, members=4, samples=50, seed=3)
    traj = adjoint.simulate(x0.expand(4, -1, -1), theta, TIMES, 1.0, bounds.f_s)
    total = traj.sum(-1)
    assert ((total - total[..., :1]).abs() / total[..., :1]).max() < 1e-10
    g_x0, g_theta = torch.autograd.grad(total[..., -1].sum(), (x0, theta))
    torch.testing.assert_close(g_x0, torch.full_like(g_x0, 4.0), rtol=0, atol=1e-10)  # 4 members share each x0
    assert g_theta.abs().max() < 1e-10
