"""The exactly solved HP lattice of the search check: walk counts, symmetry reduction, energies, the exact
factorised denoiser, couplings and the GP-EI search."""

import numpy as np
import pytest
import yaml

from repro.papers.geocoupling import search_check
from repro.papers.geocoupling.bo import propose, search
from repro.papers.geocoupling.coupling import curve_defects, named
from repro.papers.geocoupling.data import lattice_arrays
from repro.papers.geocoupling.lattice import brute_force_energy, canonical, self_avoiding_turns, solve


@pytest.fixture(scope="module")
def lattice10():
    return solve(10)


def test_walk_counts_equal_oeis_a001411(repo):
    known = yaml.safe_load((repo / "resources/geocoupling/saw_counts.yaml").read_text())["walks"]
    for steps in range(2, 10):
        assert 4 * len(self_avoiding_turns(steps + 1)) == known[steps]


def test_n10_counts_of_the_brief(lattice10):
    stable = lattice10.e_min <= -3
    assert (lattice10.walks, len(lattice10.turns)) == (16268, 2034)
    assert (lattice10.walks - 4) // 8 + 1 == len(lattice10.turns)
    assert stable.sum() == 499 and np.median(lattice10.degeneracy[stable]) == 9


def test_n12_counts_of_the_brief():
    lat = solve(12)
    stable = lat.e_min <= -3
    assert (lat.walks, len(lat.turns)) == (120292, 15037)
    assert (stable.sum(), np.median(lat.degeneracy[stable]), np.sum(lat.degeneracy[stable] == 1)) == (2939, 17, 87)


def test_energies_equal_a_site_by_site_count(lattice10):
    rng = np.random.default_rng(1)
    for s, c in zip(rng.integers(0, 1024, 300), rng.integers(0, 2034, 300)):
        assert brute_force_energy(int(s), lattice10.turns[c]) == lattice10.energy[s, c]
    assert brute_force_energy(0, np.array([0, 0, 0, 1, 1, 1, 1, 1])) is None  # a square closes on itself


def test_mirror_and_clash_lookup(lattice10):
    turns = lattice10.turns[[5, 700, 2000]]
    mirrored = np.where(turns == 1, 1, 2 - turns)
    np.testing.assert_array_equal(lattice10.conformation_index(mirrored), [5, 700, 2000])
    np.testing.assert_array_equal(canonical(turns), turns)
    assert lattice10.conformation_index(np.array([[0, 0, 0, 1, 1, 1, 1, 1]]))[0] == -1


@pytest.fixture(scope="module")
def lattice8():
    return lattice_arrays({"residues": 8, "designable": -2})


def test_ground_state_pairs_are_all_consistent_and_clashes_are_not(lattice8):
    tokens, vocab = search_check.pair_tokens(lattice8)
    assert (
        len(tokens) == int(lattice8["degeneracy"][lattice8["e_min"] <= -2].sum()) and list(vocab) == [2] * 8 + [3] * 6
    )
    assert search_check.consistency(tokens, lattice8) == 1.0
    clash = tokens.copy()
    clash[:, 8:] = [0, 0, 0, 1, 1, 1]  # a square closes on itself
    assert search_check.consistency(clash, lattice8) == 0.0


def test_exact_denoiser_revealing_one_token_at_a_time_samples_the_training_pairs(lattice8):
    tokens, vocab = search_check.pair_tokens(lattice8)
    samples = search_check.sample_curve(tokens, vocab, 1.0, 300, 400, seed=0)
    assert (samples >= 0).all()
    assert search_check.consistency(samples, lattice8) > 0.97  # sequential reveals: an exact joint sample
    every_step = search_check.sample_curve(tokens, vocab, 1.0, 300, 1, seed=0)
    assert search_check.consistency(every_step, lattice8) < 0.8  # all tokens at once: independent marginals


def test_search_check_finds_the_grid_optimum_and_names_its_numbers(lattice8):
    cfg = {"samples": 200, "steps": 3, "grid": 7}
    out = search_check.check(lattice8, cfg, {"alpha_range": [0.25, 4.0], "initial": [0.5, 2.0], "rounds": 1,
                                             "per_round": 1}, 0)  # fmt: skip
    assert len(out["grid_score"]) == 7 and len(out["search_score"]) == 3
    assert out["picked_score"] == max(out["search_score"]) and out["grid_spread"] >= 0
    best, se = out["grid_best_score"], np.sqrt(out["grid_best_score"] * (1 - out["grid_best_score"]) / 200)
    assert out["shortfall_in_standard_errors"] == pytest.approx((best - out["picked_score"]) / se)


def test_search_loop_scores_each_round_and_keeps_every_point():
    calls = []

    def evaluate(candidates, r):
        calls.append((r, {s: list(v) for s, v in candidates.items()}))
        return {s: [-((x - np.log(1.5)) ** 2) for x in v] for s, v in candidates.items()}

    trace = search(evaluate, [0, 1], {"alpha_range": [0.25, 4.0], "initial": [0.5, 1.0, 2.0], "rounds": 2,
                                      "per_round": 2})  # fmt: skip
    assert [r for r, _ in calls] == [0, 1, 2] and trace["search_log_alpha"].shape == (2, 7)
    assert trace["search_round"][0].tolist() == [0, 0, 0, 1, 1, 2, 2]
    assert np.abs(trace["search_log_alpha"][0][np.argmax(trace["search_score"][0])] - np.log(1.5)) < 0.3


@pytest.mark.parametrize("alpha", [0.25, 0.5, 1.0, 2.0, 4.0])
def test_curves_are_valid_couplings(alpha):
    assert all(v <= 1e-12 for v in curve_defects(alpha).values())


def test_named_couplings():
    assert named("alpha_2", 0.1).alpha == 2.0 and named("random", 0.1).sampling_alpha == 1.0
    with pytest.raises(ValueError, match="selected alpha"):
        named("learned", 0.1)
    with pytest.raises(ValueError, match="unknown coupling"):
        named("diagonal", 0.1)


def test_search_proposes_near_the_maximum_of_a_smooth_objective():
    x = np.log([0.25, 1.0, 4.0, 2.0])
    y = -((x - np.log(1.6)) ** 2)
    picks = propose(x, y, np.log(0.25), np.log(4.0), 2)
    assert len(picks) == 2 and all(np.log(0.25) <= p <= np.log(4.0) for p in picks)
    assert abs(picks[0] - np.log(1.6)) < 0.35
