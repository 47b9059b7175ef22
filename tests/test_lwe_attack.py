"""LWE generator, reduction, attempt counting and stepwise regression against known answers."""

import pickle
from itertools import combinations
from math import comb

import numpy as np
import pytest

from repro.papers.lwe.attack import attempts, expected_exhaustive_attempts, per_column, stepwise
from repro.papers.lwe.lwe import binary_secret, centre, lwe_samples
from repro.papers.lwe.reader import read_verde
from repro.papers.lwe.reduction import reduce_subset
from repro.workflow.io import InputError


def test_centre_is_the_representative_in_the_half_open_interval():
    x = np.arange(-20, 20)
    c = centre(x, 7)
    assert np.all((c > -3.5) & (c <= 3.5)) and np.all((c - x) % 7 == 0)


def test_lwe_samples_satisfy_b_minus_as_equals_e():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 251, size=(64, 16))
    s = binary_secret(rng, 16, 4)
    b, e = lwe_samples(rng, a, s, 251, 3.0)
    assert s.sum() == 4
    assert np.array_equal(centre(b - a @ s, 251), e)


def test_reduced_rows_are_integer_combinations_of_the_subset():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 251, size=(14, 16))
    r, ra = reduce_subset(a, 251, 4, 0.7, 0)
    assert r.shape[0] > 0 and np.any(r != 0, axis=1).all()
    assert np.all((r @ a - ra) % 251 == 0)
    assert np.abs(ra).max() <= 251


def test_attempts_is_one_for_a_perfect_ranking_and_matches_enumeration():
    score = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    assert attempts(score, np.array([0, 1])) == 1 + comb(6, 0) + comb(6, 1)
    order = sorted(combinations(range(6), 2), key=lambda s: (np.sum(s), s))
    target = (1, 4)
    ties = [s for s in order if np.sum(s) == np.sum(target)]
    before = [s for s in order if np.sum(s) < np.sum(target)]
    assert attempts(score, np.array(target)) == 1 + 6 + len(before) + (len(ties) + 1) / 2
    assert expected_exhaustive_attempts(6, 2) == 7 + (15 + 1) / 2


def test_stepwise_finds_the_support_of_a_sparse_binary_combination():
    rng = np.random.default_rng(2)
    x = rng.normal(0, 10, size=(3000, 12))
    y = x[:, [2, 5, 7]].sum(axis=1) + rng.normal(0, 5, 3000)
    assert stepwise(x, y, 1e-3, 3) == [2, 5, 7]
    assert per_column(x, y, 3) == [2, 5, 7]
    assert stepwise(x, rng.normal(0, 5, 3000), 1e-6, 3) == []


def write_verde(root, n=4, k=1, lines=None):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 97, size=(4 * n, n))
    s = np.array([1, 0, 1, 0])
    e = np.array([1, -1, 0, 2] * n)
    np.save(root / "orig_A.npy", a)
    np.save(root / "orig_b.npy", (a @ s + e) % 97)
    np.save(root / "secret.npy", s)
    (root / "params.pkl").write_bytes(pickle.dumps({"N": n, "Q": 97, "sigma": 3.0}))
    text = lines or ["1 2 3 4 ; 4", "96 0 5 1 ; 5", ""]
    (root / "train.prefix").write_text("\n".join(text))
    return a, s, e


def test_verde_reader_converts_the_release_layout(tmp_path):
    a, s, e = write_verde(tmp_path)
    out = read_verde(str(tmp_path))
    assert out["R_A"].tolist() == [[1, 2, 3, 4], [-1, 0, 5, 1]]
    assert out["R_b"].tolist() == [[4, 5]]
    assert np.array_equal(out["orig_e"][0], e)
    assert out["secrets"].shape == (1, 4) and out["hamming"].tolist() == [2]


@pytest.mark.parametrize(
    ("lines", "problem"),
    [(["1 2 3 ; 4"], "expected n = 4"), (["1 2 3 4 4"], "expected 'a ; b'"), (["1 2 x 4 ; 4"], "non-integer")],
)
def test_verde_reader_names_bad_lines(tmp_path, lines, problem):
    write_verde(tmp_path, lines=lines)
    with pytest.raises(InputError, match=problem):
        read_verde(str(tmp_path))


def test_verde_reader_names_missing_params(tmp_path):
    write_verde(tmp_path)
    (tmp_path / "params.pkl").write_bytes(pickle.dumps({"N": 4}))
    with pytest.raises(InputError, match="missing keys"):
        read_verde(str(tmp_path))
