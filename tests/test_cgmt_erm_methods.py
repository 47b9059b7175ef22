"""cgmt-erm: each method checked against an independent computation."""

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize_scalar
from sklearn.linear_model import LogisticRegression, Ridge

from repro.papers.cgmt_erm import designs, erm, evaluate, fixed_point, laws, losses


@pytest.fixture()
def mixture_data():
    rng = np.random.default_rng(0)
    params = designs.make_params("mixture", 40, rng, {"mixture_norm": 2.0, "label_noise": 0.0})
    return designs.sample(params, 120, rng)


def test_ridge_matches_sklearn(mixture_data):
    X, y = mixture_data
    lam = 0.3
    ref = Ridge(alpha=lam * len(X), fit_intercept=False, solver="cholesky").fit(X, y).coef_
    np.testing.assert_allclose(erm.ridge(X, y, lam), ref, rtol=1e-10, atol=1e-12)


def test_newton_path_reproduces_ridge_closed_form(mixture_data):
    X, y = mixture_data
    via_newton = erm.fit(X, y, "square", 0.3, reg="surrogate", shift=np.zeros(X.shape[1]))
    np.testing.assert_allclose(via_newton, erm.ridge(X, y, 0.3), atol=1e-9)


def test_logistic_matches_sklearn(mixture_data):
    X, y = mixture_data
    lam = 0.1
    sk = LogisticRegression(C=1.0 / (lam * len(X)), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(erm.fit(X, y, "logistic", lam), sk.coef_[0], atol=1e-6)


@pytest.mark.parametrize("loss", losses.LOSSES)
def test_pseudo_huber_fit_is_stationary(mixture_data, loss):
    X, y = mixture_data
    lam, c = 0.1, 0.5
    theta = erm.fit(X, y, loss, lam, reg="pseudo_huber", huber_c=c)
    r = y * (X @ theta)
    grad = (X * y[:, None]).T @ losses.derivative(loss, r) / len(X) + losses.pseudo_huber(theta, lam, c)[1]
    assert np.linalg.norm(grad) < 1e-8


def test_pseudo_huber_gradient_by_finite_differences():
    theta = np.array([0.3, -1.2, 2.0])
    value, grad = losses.pseudo_huber(theta, 0.7, 0.5)
    eps = 1e-6
    fd = [
        (losses.pseudo_huber(theta + eps * e, 0.7, 0.5)[0] - losses.pseudo_huber(theta - eps * e, 0.7, 0.5)[0])
        / (2 * eps)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(grad, fd, rtol=1e-6)


def test_surrogate_matches_gradient_at_mean():
    mu, lam, c = np.array([0.2, 1.5, -3.0]), 0.4, 1.0
    b = losses.quadratic_surrogate_shift(mu, lam, c)
    np.testing.assert_allclose(lam * mu + b, losses.pseudo_huber(mu, lam, c)[1])


@pytest.mark.parametrize("loss", losses.LOSSES)
def test_prox_minimises_the_moreau_objective(loss):
    w, g = np.array([-2.0, -0.3, 0.5, 0.99, 3.0]), 0.7
    r = losses.prox(loss, w, g)
    for wi, ri in zip(w, r):
        ref = minimize_scalar(
            lambda t: losses.value(loss, np.array(t)) + (t - wi) ** 2 / (2 * g),
            bounds=(-10, 10),
            method="bounded",
            options={"xatol": 1e-12},
        ).x
        assert abs(ri - ref) < 1e-6


def test_fixed_point_square_loss_closed_form():
    alpha, lam, s2 = 2.0, 0.1, 4.0
    o = fixed_point.solve("square", alpha, lam, s2)
    assert o.M == pytest.approx(s2 / (s2 + 1 + lam * (1 + o.gamma)), rel=1e-9)
    assert alpha * o.gamma * lam * (1 + o.gamma) + alpha * o.gamma == pytest.approx(1 + o.gamma, rel=1e-9)
    np.testing.assert_allclose(fixed_point.residuals(o.M, o.Q, o.gamma, "square", alpha, lam, s2), 0, atol=1e-9)


def test_fixed_point_matches_simulation_for_logistic():
    p, alpha, lam, s = 200, 2.0, 0.1, 1.5
    rng = np.random.default_rng(3)
    params = designs.make_params("mixture", p, rng, {"mixture_norm": s, "label_noise": 0.0})
    Ms, Qs = [], []
    for _ in range(8):
        X, y = designs.sample(params, int(alpha * p), rng)
        theta = erm.fit(X, y, "logistic", lam)
        Ms.append(theta @ params.mean)
        Qs.append(theta @ theta)
    o = fixed_point.solve("logistic", alpha, lam, s * s)
    assert np.mean(Ms) == pytest.approx(o.M, rel=0.03)
    assert np.mean(Qs) == pytest.approx(o.Q, rel=0.05)


def test_ks_and_w1_against_scipy():
    rng = np.random.default_rng(1)
    sample = 1.3 * rng.standard_normal(20_000) + 0.2
    grid = laws.grid_for(sample)
    F = laws.empirical_cdf(sample, grid)
    G = laws.gaussian_mixture_cdf(grid, [0.0], 1.0)
    assert laws.ks_distance(F, G) == pytest.approx(stats.kstest(sample, "norm").statistic, abs=2e-3)
    ref = rng.standard_normal(500_000)
    assert laws.wasserstein1(F, G, grid) == pytest.approx(stats.wasserstein_distance(sample, ref), abs=5e-3)


def test_convolution_cdf_equals_direct_mixture():
    rng = np.random.default_rng(2)
    centres = rng.uniform(-2, 2, 300)
    grid = np.linspace(-6, 6, laws.GRID_POINTS)
    direct = laws.gaussian_mixture_cdf(grid, centres, 0.4)
    assert np.max(np.abs(laws.convolution_cdf(grid, centres, 0.4) - direct)) < 2e-3


def test_fluctuation_variance_is_trace_of_c_times_second_moment():
    rng = np.random.default_rng(4)
    thetas, X = rng.standard_normal((30, 6)), rng.standard_normal((500, 6)) + 1.0
    m = laws.Moments.from_fits(thetas, X)
    C, S = np.cov(thetas, rowvar=False), X.T @ X / len(X)
    assert m.fluct_var == pytest.approx(np.trace(C @ S), rel=1e-10)
    np.testing.assert_allclose(m.mean_proj, X @ thetas.mean(0))


def test_ridge_moments_against_linear_map():
    rng = np.random.default_rng(5)
    X, theta_star, sigma, lam = rng.standard_normal((30, 8)), rng.standard_normal(8), 0.7, 0.2
    mean, cov = evaluate.ridge_moments(X, theta_star, sigma, lam)
    B = np.linalg.solve(X.T @ X + lam * len(X) * np.eye(8), X.T)
    np.testing.assert_allclose(mean, B @ X @ theta_star, rtol=1e-10)
    np.testing.assert_allclose(cov, sigma**2 * B @ B.T, rtol=1e-10)


def test_ks_tolerance_is_the_dkw_bound():
    # DKW: P(sup |F_n - F| > eps) <= 2 exp(-2 n eps^2) = delta
    eps = laws.ks_tolerance(10_000, 0.05)
    assert 2 * np.exp(-2 * 10_000 * eps**2) == pytest.approx(0.05)


def test_held_out_moments_keep_the_total_variance():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 5))
    thetas = rng.standard_normal((10, 5)) * 0.3 + 1.0
    mom = laws.Moments.from_fits(thetas, X)
    assert mom.held_out().fluct_var == pytest.approx(mom.fluct_var * 0.9)
