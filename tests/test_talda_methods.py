"""TALDA problems and methods: saddles, derivatives, the Lyapunov guarantee, rates, claims and bad input."""

import numpy as np
import pytest
import xarray as xr

from repro.papers.talda import evaluate, methods, problems, rates
from repro.workflow.io import InputError


def batch(instances):
    return problems.QuadraticGames(*(np.stack([i[k] for i in instances]) for k in ("A", "B", "C", "a", "c")))


@pytest.fixture(scope="module")
def games():
    rng = np.random.default_rng(0)
    return batch([problems.quadratic_game(rng, 6, c, 0.2, 1.0) for c in (1e-3, 0.1, 1.0, 10.0)])


def test_saddle_solves_the_stationarity_system(games):
    xs, ys = games.saddle()
    gx, gy = games.grad(xs, ys)
    np.testing.assert_allclose(gx, 0, atol=1e-10)
    np.testing.assert_allclose(gy, 0, atol=1e-10)
    k = 3
    full = np.block([[games.A[k], games.B[k]], [games.B[k].T, -games.C[k]]])
    want = np.linalg.lstsq(full, -np.concatenate([games.a[k], games.c[k]]), rcond=None)[0]
    np.testing.assert_allclose(np.concatenate([xs[k], ys[k]]), want, atol=1e-10)


def test_generated_coupling_and_spectrum(games):
    k = games.constants()
    np.testing.assert_allclose(k["l_xy"], [1e-3, 0.1, 1.0, 10.0], rtol=1e-10)
    np.testing.assert_allclose(k["mu_x"], 0.2, rtol=1e-10)
    np.testing.assert_allclose(k["l_yy"], 1.0, rtol=1e-10)


def finite_difference_grad(f, x, y, h=1e-6):
    gx = np.array([(f(x + h * e, y) - f(x - h * e, y)) / (2 * h) for e in np.eye(len(x))])
    gy = np.array([(f(x, y + h * e) - f(x, y - h * e)) / (2 * h) for e in np.eye(len(y))])
    return gx, gy


def test_robust_least_squares_matches_its_objective():
    rng = np.random.default_rng(2)
    inst = problems.robust_least_squares(np.random.default_rng(5), 3, 5, 3.0)
    game = batch([inst])
    m_rng = np.random.default_rng(5)
    m = m_rng.normal(size=(5, 3)) / np.sqrt(5)
    b = m_rng.normal(size=5)

    def f(x, y):
        return np.sum((m @ x - b - y) ** 2) - 3.0 * np.sum(y**2)

    x, y = rng.normal(size=3), rng.normal(size=5)
    gx, gy = game.grad(x[None], y[None])
    fx, fy = finite_difference_grad(f, x, y)
    np.testing.assert_allclose(gx[0], fx, atol=1e-6)
    np.testing.assert_allclose(gy[0], fy, atol=1e-6)


def test_yang_derivatives_and_saddle():
    x, y = np.array([[0.7], [-1.2]]), np.array([[0.3], [2.0]])
    gx, gy = problems.YangExample.grad(x, y)
    h = 1e-6
    f = problems.YangExample.value
    np.testing.assert_allclose(gx, (f(x + h, y) - f(x - h, y)) / (2 * h), atol=1e-6)
    np.testing.assert_allclose(gy, (f(x, y + h) - f(x, y - h)) / (2 * h), atol=1e-6)
    fxx, fxy, fyy = problems.YangExample.hessian(x, y)
    np.testing.assert_allclose(
        fxy, (problems.YangExample.grad(x, y + h)[0] - problems.YangExample.grad(x, y - h)[0]) / (2 * h), atol=1e-5
    )
    np.testing.assert_allclose(
        fyy, (problems.YangExample.grad(x, y + h)[1] - problems.YangExample.grad(x, y - h)[1]) / (2 * h), atol=1e-5
    )
    assert problems.YangExample.grad(np.zeros(1), np.zeros(1)) == (0.0, 0.0)


def test_yang_constants_on_the_grid():
    k = problems.estimate_yang_constants(3.0, 201)
    assert k["l_yy"] == pytest.approx(28.0)
    assert 0 < k["mu_x"] <= 2.0 and 0 < k["mu_y"]


def test_hvp_matches_finite_differences_of_the_gradient(games):
    rng = np.random.default_rng(1)
    x, y, vx, vy = (rng.normal(size=(4, 6)) for _ in range(4))
    h = 1e-6
    plus, minus = games.grad(x + h * vx, y + h * vy), games.grad(x - h * vx, y - h * vy)
    hx, hy = games.hvp(x, y, vx, vy)
    np.testing.assert_allclose(hx, (plus[0] - minus[0]) / (2 * h), atol=1e-6)
    np.testing.assert_allclose(hy, (plus[1] - minus[1]) / (2 * h), atol=1e-6)


@pytest.mark.parametrize("multiplier", [1.0, 50.0])
def test_talda_lyapunov_never_increases(games, multiplier):
    rng = np.random.default_rng(4)
    eta_x, eta_y = methods.theory_steps("talda", games.constants())
    trace = methods.run(
        "talda", games, rng.normal(size=(4, 6)), rng.normal(size=(4, 6)), multiplier * eta_x, multiplier * eta_y, 200
    )
    assert np.all(np.diff(trace.lyapunov, axis=1) <= 0)
    assert np.all(trace.corrections <= trace.extras["active"]) and np.all(trace.extras["active"] <= 200)
    if multiplier > 1:
        assert trace.corrections.sum() > 0
    else:  # at the theory step not every iteration needs the safeguard
        assert trace.corrections.sum() < trace.extras["active"].sum()


def test_lyapunov_vanishes_only_at_the_saddle(games):
    xs, ys = games.saddle()
    k = games.constants()
    assert np.all(methods.lyapunov(*games.grad(xs, ys), k) < 1e-18)
    assert np.all(methods.lyapunov(*games.grad(xs + 0.1, ys), k) > 1e-6)


def test_talda_x_step_tends_to_one_over_lxx_when_decoupled(games):
    eta_x, eta_y = methods.theory_steps("talda", games.constants())
    assert eta_x[0] == pytest.approx(1.0, rel=1e-4)
    assert eta_x[-1] < 0.01 and np.all(eta_y == pytest.approx(1.0))


def test_bilinear_game_separates_gda_from_extragradient():
    """f = xy: simultaneous GDA spirals out, EG and OGDA converge -- the textbook distinction."""
    game = problems.QuadraticGames(
        np.zeros((1, 1, 1)), np.ones((1, 1, 1)), np.zeros((1, 1, 1)), np.zeros((1, 1)), np.zeros((1, 1))
    )
    x0, y0, eta = np.ones((1, 1)), np.ones((1, 1)), np.full(1, 0.2)
    gda = methods.run("gda", game, x0, y0, eta, eta, 50)
    assert gda.error[0, 1] == pytest.approx(2 * (1 + 0.2**2))
    assert gda.error[0, -1] > gda.error[0, 0]
    for name in ("eg", "ogda"):
        assert methods.run(name, game, x0, y0, eta, eta, 300).error[0, -1] < 1e-3


def test_fit_rate_on_a_geometric_sequence():
    k = np.arange(200)
    error = 5.0 * 0.9**k
    fit = rates.fit_rate(error, k, burn_in=0.1, floor=1e-300)
    assert fit["rate"] == pytest.approx(0.9, rel=1e-10) and fit["r2"] == pytest.approx(1.0)
    floored = np.maximum(error, 1e-8)
    assert rates.fit_rate(floored, k, burn_in=0.1, floor=1e-8)["rate"] == pytest.approx(0.9, rel=1e-8)
    assert rates.fit_rate(np.r_[error[:10], np.inf], np.arange(11), 0.1, 1e-8)["slope"] == np.inf


def test_evaluate_rejects_a_store_without_the_variables(tmp_path):
    path = tmp_path / "runs.zarr"
    xr.Dataset({"error": ("i", np.zeros(3))}).to_zarr(path)
    with pytest.raises(InputError, match="runs.zarr.*missing variables"):
        evaluate.open_runs(str(path))
