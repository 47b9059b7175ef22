"""Controller, rollout gradients and the optimisers' budget accounting."""

import numpy as np
import pytest

from repro.papers.neural_control.cases import buckled_start, make_case
from repro.papers.neural_control.controller import Adam, Controller
from repro.papers.neural_control.methods import METHODS, run_method
from repro.papers.neural_control.rod import Rod
from repro.papers.neural_control.tasks import adjoint_gradient, rollout

CFG = {
    "adjoint": {"horizon": 3, "lr": 0.01, "patience": 5, "loss_threshold": 1e-12},
    "spsa": {"lr": 0.01, "perturbation": 0.05, "loss_threshold": 1e-12},
    "cem": {"population": 4, "elites": 2, "keep_elites": 1, "sigma": 0.1, "momentum": 0.2, "loss_threshold": 1e-12},
}


@pytest.fixture(scope="module")
def setup():
    rod = Rod(13)
    x0, z0 = buckled_start(rod, 0.1)
    return rod, x0, z0


def test_controller_backward_matches_finite_differences():
    ctrl = Controller([8, 8], 3, 0.05, np.random.default_rng(0), 1.0)
    lam = np.linspace(0.1, 1.0, 5)
    weights = np.random.default_rng(1).normal(size=(5, 3))
    theta = ctrl.theta.copy()

    def loss(t):
        return float(np.sum(weights * ctrl.controls(lam, t)))

    fd = np.array([(loss(theta + 1e-6 * e) - loss(theta - 1e-6 * e)) / 2e-6 for e in np.eye(theta.size)])
    np.testing.assert_allclose(ctrl.backward(lam, weights), fd, rtol=1e-5, atol=1e-9)
    assert np.all(np.abs(ctrl.controls(lam)) <= 0.05)


def test_adam_first_step_moves_each_parameter_by_the_learning_rate():
    adam = Adam(3, 0.1)
    np.testing.assert_allclose(adam.step(np.zeros(3), np.array([2.0, -1e-3, 5.0])), [-0.1, 0.1, -0.1], rtol=1e-4)


@pytest.mark.parametrize("name", ["t1", "t2", "t3"])
def test_trajectory_gradient_through_the_equilibrium_sequence(setup, name):
    """dLoss/du of a whole continuation by adjoint solves equals finite differences of re-run rollouts."""
    rod, x0, z0 = setup
    task, path, _ = make_case(name, 0, rod, x0, z0, {"steps": 4, "bound": 0.02}, 0)
    task.tol = 1e-13
    u = 0.5 * path + 0.003
    grad = adjoint_gradient(task, rollout(task, u, x0, z0))
    fd = np.zeros_like(u)
    for idx in np.ndindex(*u.shape):
        du = np.zeros_like(u)
        du[idx] = 1e-6
        fd[idx] = (rollout(task, u + du, x0, z0).loss - rollout(task, u - du, x0, z0).loss) / 2e-6
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-9 * np.max(np.abs(fd)))


def test_target_path_reproduces_its_target_with_zero_loss(setup):
    rod, x0, z0 = setup
    task, path, _ = make_case("t1", 1, rod, x0, z0, {"steps": 5, "bound": 0.02}, 0)
    assert rollout(task, path, x0, z0).loss == pytest.approx(0.0, abs=1e-20)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_stays_within_the_solve_budget(setup, method):
    rod, x0, z0 = setup
    task, _, _ = make_case("t1", 0, rod, x0, z0, {"steps": 6, "bound": 0.02}, 0)
    ctrl = Controller([8, 8], task.inputs, task.bound, np.random.default_rng(0), 0.1)
    result = run_method(method, task, ctrl, CFG, 60, np.random.default_rng(1))
    assert 0 < result.solves <= 60
    assert len(result.free) == task.steps
    assert result.best_loss == pytest.approx(task.trajectory_loss(result.free, result.z), rel=1e-9)
