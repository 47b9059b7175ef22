"""Poisson relaxations: Campbell moments, exact unbiasedness of the cubic EAT, metrics against independent code."""

import math

import numpy as np
import pytest
import torch
from scipy import integrate, stats

from repro.papers.poisson_eat import closed_forms, metrics, relaxations


def indicator_np(t: float, tau: float, kind: str) -> float:
    """Independent scalar transcription of the four indicators."""
    if kind == "sigmoid":
        return 1.0 / (1.0 + math.exp(-(1.0 - t) / tau))
    if t <= 1 - tau:
        return 1.0
    if t >= 1 + tau:
        return 0.0
    u = (t - 1 + tau) / (2 * tau)
    return {"cubic": 1 - (3 * u**2 - 2 * u**3), "linear": 1 - u, "cosine": 0.5 * (1 + math.cos(math.pi * u))}[kind]


@pytest.mark.parametrize("kind", closed_forms.INDICATORS)
@pytest.mark.parametrize("tau", [0.1, 0.5, 1.0])
def test_campbell_closed_forms_match_quadrature(kind, tau):
    rate = 3.0
    upper = 1 + 60 * tau if kind == "sigmoid" else 1 + tau
    points = [1 - tau, 1, 1 + tau]
    first = integrate.quad(lambda t: indicator_np(t, tau, kind), 0, upper, points=points, limit=200)[0]
    second = integrate.quad(lambda t: indicator_np(t, tau, kind) ** 2, 0, upper, points=points, limit=200)[0]
    mean, var = closed_forms.eat_moments(rate, tau, kind)
    assert mean == pytest.approx(rate * first, rel=1e-7)
    assert var == pytest.approx(rate * second, rel=1e-7)


def test_torch_indicator_matches_scalar_transcription():
    t = torch.linspace(0, 3, 301, dtype=torch.float64)
    for kind in closed_forms.INDICATORS:
        got = relaxations.indicator(t, 0.5, kind).numpy()
        want = [indicator_np(float(v), 0.5, kind) for v in t]
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_brief_examples():
    assert closed_forms.eat_moments(3, 0.5, "sigmoid")[0] == pytest.approx(3.190, abs=5e-4)
    assert closed_forms.eat_moments(3, 0.5, "sigmoid")[1] == pytest.approx(1.869, abs=5e-4)
    assert closed_forms.eat_moments(3, 0.5, "cubic") == pytest.approx((3.0, 2.614), abs=5e-4)
    assert closed_forms.eat_moments(10, 1.0, "sigmoid")[0] == pytest.approx(13.13, abs=5e-3)


def test_compact_indicators_refuse_tau_above_one():
    with pytest.raises(ValueError, match="tau <= 1"):
        relaxations.eat_sample(torch.ones(3, dtype=torch.float64), 1.5, "cubic")


@pytest.mark.parametrize("mean", [0.0, 0.01, 0.5, 3, 20, 200, 5000])
def test_arrival_bound_truncates_with_negligible_probability(mean):
    n = relaxations.n_arrivals(mean, 0.0 + 1e-9, "cubic")
    assert stats.poisson.sf(n - 1, mean * (1 + 1e-9)) < 1e-12


def test_cubic_eat_mean_is_the_rate_and_sigmoid_is_biased():
    gen = torch.Generator().manual_seed(1)
    rate = torch.full((40_000,), 3.0, dtype=torch.float64)
    cubic = relaxations.eat_sample(rate, 0.5, "cubic", gen).numpy()
    sigmoid = relaxations.eat_sample(rate, 0.5, "sigmoid", gen).numpy()
    assert abs(metrics.mean_zscore(cubic, 3.0)) < 4
    assert abs(metrics.variance_zscore(cubic, closed_forms.eat_moments(3.0, 0.5, "cubic")[1])) < 4
    assert abs(metrics.mean_zscore(sigmoid, closed_forms.eat_moments(3.0, 0.5, "sigmoid")[0])) < 4
    assert metrics.mean_zscore(sigmoid, 3.0) > 8


def test_cubic_eat_pathwise_gradient_of_the_mean_is_one():
    rate = torch.full((20_000,), 2.0, dtype=torch.float64, requires_grad=True)
    torch.manual_seed(0)
    relaxations.eat_sample(rate, 0.5, "cubic").sum().backward()
    grads = rate.grad.numpy()
    assert abs(grads.mean() - 1.0) < 4 * grads.std() / math.sqrt(grads.size)


def test_bucketed_and_unbucketed_eat_agree_in_distribution():
    torch.manual_seed(0)
    rates = torch.tensor([0.5, 8.0], dtype=torch.float64).repeat(10_000)
    bucketed = relaxations.eat_sample(rates, 0.5, "cubic").numpy()
    whole = relaxations.eat_sample(rates, 0.5, "cubic", buckets=1).numpy()
    for r, sel in ((0.5, slice(0, None, 2)), (8.0, slice(1, None, 2))):
        assert abs(metrics.mean_zscore(bucketed[sel], r)) < 4
        assert abs(metrics.mean_zscore(whole[sel], r)) < 4


def test_gsm_at_low_temperature_is_nearly_poisson():
    torch.manual_seed(0)
    z = relaxations.gsm_sample(torch.full((20_000,), 4.0, dtype=torch.float64), 0.02).numpy()
    assert np.mean(np.abs(z - np.round(z))) < 0.02
    assert metrics.w1_to_discrete(np.round(z), *metrics.poisson_law(4.0)) < 0.05
    assert relaxations.gsm_support(4.0) >= stats.poisson.ppf(1 - 1e-8, 4.0)


def test_negative_binomial_mixture_mean():
    torch.manual_seed(0)
    shape = torch.full((20_000,), 2.0, dtype=torch.float64)
    z = relaxations.negative_binomial_sample(shape, torch.full_like(shape, 0.5), 0.5, "eat_cubic").numpy()
    assert abs(metrics.mean_zscore(z, 4.0)) < 4


def test_w1_matches_scipy():
    rng = np.random.default_rng(0)
    samples = rng.gamma(3.0, 1.0, size=500)
    support, pmf = metrics.poisson_law(3.0)
    want = stats.wasserstein_distance(samples, support, v_weights=pmf)
    assert metrics.w1_to_discrete(samples, support, pmf) == pytest.approx(want, rel=1e-10)


def test_exact_gradient_identity_against_analytic_derivatives():
    for lam in (0.5, 2.0, 7.0):
        assert metrics.exact_poisson_gradient(lambda k: k**2, lam) == pytest.approx(1 + 2 * lam, rel=1e-10)
        want = (math.exp(-1) - 1) * math.exp(lam * (math.exp(-1) - 1))
        assert metrics.exact_poisson_gradient(lambda k: np.exp(-k), lam) == pytest.approx(want, rel=1e-10)


def test_gradient_quality_on_a_hand_example():
    per_sample = np.array([[1.0, 0.0], [3.0, 2.0]])
    q = metrics.gradient_quality(per_sample, np.array([2.0, 2.0]))
    assert q["bias_energy"] == pytest.approx(1.0)
    assert q["noise_energy"] == pytest.approx(2.0)
    assert q["cosine"] == pytest.approx(6 / (math.sqrt(5) * math.sqrt(8)))


def test_poisson_kl_matches_summed_log_ratio():
    r, delta = 2.0, 1.7
    k = np.arange(80)
    p, q = stats.poisson.pmf(k, r * delta), stats.poisson.pmf(k, r)
    assert metrics.poisson_kl(r * delta, r) == pytest.approx(np.sum(p * np.log(p / q)), rel=1e-9)
