"""The DEQ-style learned equilibrium model: fixed point, implicit gradients against finite differences, fitting,
and the optimisers running on it through the task interface."""

import copy

import numpy as np
import pytest

from repro.papers.neural_control.controller import Controller
from repro.papers.neural_control.deq import DEQ, DEQTask, fit
from repro.papers.neural_control.learned import control_gradient_check, gradient_check, tracking_case
from repro.papers.neural_control.methods import run_method

METHODS_CFG = {
    "adjoint": {"horizon": 3, "lr": 0.01, "patience": 3, "loss_threshold": 1e-12},
    "spsa": {"lr": 0.01, "perturbation": 0.05, "loss_threshold": 1e-12},
    "cem": {"population": 4, "elites": 2, "keep_elites": 1, "sigma": 0.1, "momentum": 0.2, "loss_threshold": 1e-12},
}


@pytest.fixture
def model_and_data():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(40, 6))
    y = np.stack([np.sin(z[:, 1]), z[:, 4] * z[:, 1]], axis=1)
    return DEQ.init(8, z, y, rng, rho=0.9), z, y


def test_fixed_point_satisfies_the_equilibrium_and_is_unique(model_and_data):
    model, z, _ = model_and_data
    model.W = model.W * 0.9 / np.linalg.norm(model.W)
    h, _ = model.solve(z)
    s = (z - model.mu) / model.sigma
    np.testing.assert_allclose(h, np.tanh(h @ model.W.T + s @ model.U.T + model.b), atol=1e-12)
    h2, _ = model.solve(z, h0=np.random.default_rng(1).uniform(-1, 1, h.shape))
    np.testing.assert_allclose(h2, h, atol=1e-10)


def test_implicit_gradients_equal_central_differences(model_and_data):
    model, z, y = model_and_data
    assert gradient_check(model, z, y, 1e-6, 10, np.random.default_rng(2)) < 1e-6
    h0, _ = model.solve(np.zeros((1, 6)))
    task = DEQTask(model, h0[0], np.zeros(6), 5, 0.05, np.ones((5, 2)))
    assert control_gradient_check(task, np.random.default_rng(3).uniform(-0.05, 0.05, (5, 2)), 1e-6) < 1e-6


def test_fitting_lowers_the_loss_and_keeps_the_contraction(model_and_data):
    model, z, y = model_and_data
    history = fit(model, z, y, 60, 0.03)
    assert history[-1] < 0.5 * history[0]
    assert np.linalg.norm(model.W) <= 0.9 + 1e-12


def test_gradient_check_detects_a_wrong_gradient(model_and_data, monkeypatch):
    model, z, y = model_and_data
    original = DEQ.fit_loss_and_gradient

    def wrong(self, zz, yy):
        loss, grad, h = original(self, zz, yy)
        return loss, 1.5 * grad, h

    monkeypatch.setattr(DEQ, "fit_loss_and_gradient", wrong)
    assert gradient_check(copy.deepcopy(model), z, y, 1e-6, 10, np.random.default_rng(2)) > 0.1


def test_optimisers_track_a_reachable_target_through_the_model(model_and_data):
    model, _, _ = model_and_data
    h0, _ = model.solve(np.zeros((1, 6)))
    task = tracking_case(model, h0[0], np.zeros(6), 6, 0.05, case=0)
    for method in ("adjoint_rhc", "spsa", "cem"):
        ctrl = Controller([8], task.inputs, task.bound, np.random.default_rng(0), 0.1)
        result = run_method(method, task, ctrl, METHODS_CFG, 60, np.random.default_rng(1))
        assert result.solves <= 60 + task.steps and np.isfinite(result.best_loss)
        assert result.best_loss == pytest.approx(task.trajectory_loss(result.free, result.z), rel=1e-9)
    assert len(result.segments) == 0
    ctrl = Controller([8], task.inputs, task.bound, np.random.default_rng(0), 0.1)
    rhc = run_method("adjoint_rhc", task, ctrl, METHODS_CFG, 60, np.random.default_rng(1))
    assert len(rhc.segments) == 2 and np.max(rhc.segments) >= 0
