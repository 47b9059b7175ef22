"""LWE generator, reduction, attempt counting and stepwise regression against known answers."""

import pickle
from itertools import combinations
from math import comb

import numpy as np
import pytest

from repro.papers.lwe.attack import attempts, cruel_columns, expected_exhaustive_attempts, per_column, stepwise
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
    out, record = read_verde(str(tmp_path), tmp_path / "scratch")
    assert out["R_A"].tolist() == [[1, 2, 3, 4], [-1, 0, 5, 1]]
    assert out["R_b"].tolist() == [[4, 5]]
    assert np.array_equal(out["orig_e"][0], e)
    assert out["secrets"].shape == (1, 4) and out["hamming"].tolist() == [2]
    assert record["refused"] == {"lines": 2, "refused": 0, "first_refused": []}


GOOD = ["1 2 3 4 ; 4"] * 8


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ("1 2 3 ; 4", "3 entries of a, expected n = 4"),
        ("1 2 3 4 4", "expected 'a ; b'"),
        ("1 2 x 4 ; 4", "non-integer"),
        ("1 2 3 4 ; 4 5", "2 b values"),
        ("1 2 3 400 ; 4", "outside"),
    ],
)
def test_verde_reader_refuses_and_names_bad_lines(tmp_path, bad, problem):
    write_verde(tmp_path, lines=GOOD[:4] + [bad] + GOOD[4:])
    out, record = read_verde(str(tmp_path), tmp_path / "scratch", max_bad_fraction=0.2)
    assert out["R_A"].shape == (8, 4)
    assert record["refused"]["refused"] == 1 and record["refused"]["lines"] == 9
    assert (
        record["refused"]["first_refused"][0].startswith("line 5:") and problem in record["refused"]["first_refused"][0]
    )
    with pytest.raises(InputError, match=f"1 of 9 lines refused.*line 5: .*{problem}"):
        read_verde(str(tmp_path), tmp_path / "scratch", max_bad_fraction=0.1)


def test_verde_reader_refuses_a_line_cut_short_at_the_end_of_the_file(tmp_path):
    write_verde(tmp_path, lines=GOOD + ["1 2 3"])
    out, record = read_verde(str(tmp_path), tmp_path / "scratch", max_bad_fraction=0.5)
    assert out["R_A"].shape == (8, 4) and record["refused"]["first_refused"] == ["line 9: expected 'a ; b'"]


def test_verde_reader_reads_in_chunks_with_the_same_result(tmp_path):
    from repro.papers.lwe.reader import read_prefix

    rng = np.random.default_rng(0)
    rows = rng.integers(0, 97, size=(50, 5))
    write_verde(tmp_path, lines=[" ".join(map(str, r[:4])) + " ; " + str(r[4]) for r in rows])
    whole = read_prefix(tmp_path / "train.prefix", 4, 1, 97, tmp_path / "a", chunk_lines=1000)
    chunked = read_prefix(tmp_path / "train.prefix", 4, 1, 97, tmp_path / "b", chunk_lines=7)
    assert np.array_equal(whole[0], chunked[0]) and np.array_equal(whole[1], chunked[1])
    assert np.array_equal(whole[1][0], rows[:, 4])


def test_verde_params_are_read_as_plain_values_only(tmp_path):
    write_verde(tmp_path)

    class Planted:
        def __reduce__(self):
            return (print, ("code ran",))

    (tmp_path / "params.pkl").write_bytes(pickle.dumps({"N": 4, "Q": 97, "sigma": 3.0, "x": Planted()}))
    with pytest.raises(InputError, match="only plain values"):
        read_verde(str(tmp_path), tmp_path / "scratch")


def test_verde_reader_reads_the_fixture_release(tmp_path):
    from repro.fixtures import verde

    verde.write(tmp_path)
    out, record = read_verde(str(tmp_path / verde.FOLDER), tmp_path / "scratch")
    assert out["R_A"].shape == (verde.ROWS, verde.N) and record["refused"]["refused"] == 0
    assert out["hamming"].tolist() == list(verde.HAMMING)
    q = verde.Q
    # b = R A s + small error on the reduced rows, and the cruel columns are those of the fixture
    residual = centre(out["R_b"] - out["secrets"].astype(np.int64) @ out["R_A"].T, q)
    assert np.std(residual) < 5 * verde.SIGMA * verde.R_NORM
    assert cruel_columns(out["R_A"], q, 0.7).tolist() == list(range(verde.CRUEL))
