"""SurvSHAP-IQ algebra against closed forms and brute force, and the survival simulator against its law."""

from itertools import permutations
from math import factorial

import numpy as np
import pytest
from scipy import stats

from repro.papers.survfd.interactions import (
    game,
    interaction_share,
    k_sii,
    local_accuracy_error,
    mask_of,
    moebius,
    time_dependent_share,
)
from repro.papers.survfd.simulate import Scenario, sample


def random_game(p: int, seed: int = 0) -> np.ndarray:
    nu = np.random.default_rng(seed).normal(size=(2**p, 3, 4))
    nu[0] = 0.0
    return nu


def test_p3_order2_matches_the_closed_form():
    nu = random_game(3)
    m = moebius(nu)
    phi = k_sii(m, 2)
    top = m[mask_of(0, 1, 2)]
    for i in range(3):
        assert np.allclose(phi[mask_of(i)], m[mask_of(i)] - top / 6)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        assert np.allclose(phi[mask_of(i, j)], m[mask_of(i, j)] + top / 2)


def test_moebius_inverts_to_the_game():
    nu = random_game(4, 1)
    m = moebius(nu)
    for s in range(16):
        assert np.allclose(nu[s], np.sum([m[t] for t in range(16) if t & s == t], axis=0))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_k_sii_is_efficient(order):
    nu = random_game(5, order)
    assert local_accuracy_error(k_sii(moebius(nu), order), nu) < 1e-12


def test_order_one_is_the_shapley_value_by_permutations():
    p = 4
    nu = random_game(p, 3)
    phi = k_sii(moebius(nu), 1)
    for i in range(p):
        total = np.zeros_like(nu[0])
        for perm in permutations(range(p)):
            before = mask_of(*perm[: perm.index(i)])
            total += nu[before | 1 << i] - nu[before]
        assert np.allclose(phi[1 << i], total / factorial(p))


def test_additive_function_has_no_interaction_mass_and_a_product_does():
    """A product's marginal game also has main effects (x1 times the background mean of x2): share in (0, 1)."""
    rng = np.random.default_rng(0)
    x, bg = rng.normal(size=(5, 3)), rng.normal(size=(20, 3))
    additive = game(lambda r: (r @ [1.0, 2.0, -1.0])[:, None], x, bg)
    product = game(lambda r: (r[:, 0] * r[:, 1])[:, None], x, bg)
    assert np.max(interaction_share(moebius(additive))) < 1e-12
    assert np.min(interaction_share(moebius(product))) > 0.1


def test_cumulative_hazard_integrates_the_hazard():
    sc = Scenario("t", (0.5, -0.2, 0.3), 0.7, 0.3, 0.0)
    x = np.random.default_rng(1).normal(size=(4, 3)).clip(-2, 2)
    t = np.linspace(0.5, 20, 4001)
    numeric = np.cumsum(sc.hazard(x, t, 0.03), axis=1) * (t[1] - t[0])
    exact = sc.cumulative_hazard(x, t, 0.03) - sc.cumulative_hazard(x, t[:1], 0.03)
    assert np.allclose(numeric[:, -1] - numeric[:, 0], exact[:, -1] - exact[:, 0], rtol=1e-3)


def test_sampled_event_times_follow_the_survival_function():
    sc = Scenario("t", (0.5, -0.2, 0.3), 0.7, 0.3, 0.0)
    drawn = sample(np.random.default_rng(2), sc, 1500, 0.03, 2.5, 1e9)
    u = sc.survival(drawn["x"], drawn["time"], 0.03)
    u = np.diagonal(u)[drawn["event"]]
    assert u.size > 1450
    assert stats.kstest(u, "uniform").pvalue > 0.01


def test_delta_too_large_for_the_clip_is_refused():
    with pytest.raises(ValueError, match="delta"):
        sample(np.random.default_rng(0), Scenario("bad", (0, 0, 0), 0, 0.5, 0), 10, 0.03, 2.5, 10)


def test_proportional_hazards_interaction_is_time_invariant_on_log_hazard_only():
    sc = Scenario("i", (0.5, -0.2, 0.3), 0.8, 0.0, 0.0)
    rng = np.random.default_rng(4)
    x, bg, t = rng.normal(size=(6, 3)), rng.normal(size=(30, 3)), np.linspace(1, 30, 12)
    log_h = moebius(game(lambda r: sc.log_hazard(r, t, 0.03), x, bg))
    surv = moebius(game(lambda r: sc.survival(r, t, 0.03), x, bg))
    assert time_dependent_share(log_h) < 1e-12
    assert time_dependent_share(surv) > 0.05
