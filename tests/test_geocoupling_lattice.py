"""The exact HP-lattice benchmark: walk counts, symmetry reduction, energies, metrics, couplings, the GP search."""

import numpy as np
import pytest
import yaml
from scipy.spatial.distance import pdist

from repro.papers.geocoupling.bo import propose
from repro.papers.geocoupling.coupling import curve_defects, named
from repro.papers.geocoupling.lattice import (
    brute_force_energy,
    canonical,
    self_avoiding_turns,
    sequence_bits,
    solve,
)
from repro.papers.geocoupling.metrics import mean_pairwise_hamming, pair_codes, score_samples


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


def test_hamming_matches_scipy():
    bits = np.random.default_rng(0).integers(0, 2, (40, 10))
    assert mean_pairwise_hamming(bits) == pytest.approx(pdist(bits, "hamming").mean())


def test_scores_of_ground_states_and_of_clashes(lattice10):
    seqs = np.flatnonzero(lattice10.e_min <= -3)[:20]
    conf = np.argmax(lattice10.energy[seqs] == lattice10.e_min[seqs, None], axis=1)
    args = (lattice10.energy, lattice10.e_min, lattice10.index_of_code)
    train = pair_codes(seqs, conf, lattice10.energy.shape[1])
    good = score_samples(sequence_bits(10, seqs), lattice10.turns[conf], *args, train, -3)
    assert good["consistency"] == 1.0 and good["validity"] == 1.0 and good["novelty"] == 0.0
    clash = np.tile([0, 0, 0, 1, 1, 1, 1, 1], (20, 1))
    bad = score_samples(sequence_bits(10, seqs), clash, *args, train, -3)
    assert bad["validity"] == 0.0 and bad["consistency"] == 0.0
    worst = np.argmax(lattice10.energy[seqs], axis=1)
    excited = score_samples(sequence_bits(10, seqs), lattice10.turns[worst], *args, train, -3)
    assert excited["validity"] == 1.0 and excited["consistency"] == 0.0


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
