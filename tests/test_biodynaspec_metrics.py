"""Metrics against independent computations (mdtraj RMSD, exact assignment, closed forms)."""

from __future__ import annotations

import itertools

import mdtraj as md
import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.spatial.transform import Rotation

from repro.papers.biodynaspec import metrics as M
from repro.papers.biodynaspec.geometry import rmsd_after_superposition


def _traj(seed=0, frames=20, atoms=15):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(atoms, 3)) * 8 + np.cumsum(rng.normal(scale=0.3, size=(frames, atoms, 3)), axis=0)


def test_per_frame_rmsd_matches_mdtraj():
    a, b = _traj(0), _traj(1)
    top = md.Topology()
    chain = top.add_chain()
    for _ in range(a.shape[1]):
        top.add_atom("CA", md.element.carbon, top.add_residue("ALA", chain))
    ta, tb = md.Trajectory(a / 10, top), md.Trajectory(b / 10, top)
    expected = np.array([md.rmsd(ta, tb, frame=t)[t] for t in range(len(a))]) * 10
    np.testing.assert_allclose(rmsd_after_superposition(a, b), expected, atol=1e-4)
    curve = M.r_s_curve(a, b, include_first=True)
    np.testing.assert_allclose(curve, np.cumsum(expected) / np.arange(1, len(a) + 1), atol=1e-4)


def test_r_s_zero_on_truth_and_invariant_to_rigid_motions():
    true = _traj(3)
    assert np.allclose(M.r_s_curve(true, true), 0, atol=1e-6)
    gen = _traj(4)
    rots = Rotation.random(len(gen), random_state=0).as_matrix()
    moved = np.einsum("fai,fji->faj", gen, rots) + np.random.default_rng(0).normal(size=(len(gen), 1, 3)) * 50
    np.testing.assert_allclose(M.r_s_curve(moved, true), M.r_s_curve(gen, true), atol=1e-6)
    assert len(M.r_s_curve(gen, true)) == len(gen) - 1


@pytest.mark.parametrize("n,d", [(6, 2), (9, 3), (12, 1)])
def test_w2_equals_exact_assignment(n, d):
    rng = np.random.default_rng(n)
    a, b = rng.normal(size=(n, d)), rng.normal(loc=0.5, size=(n, d))
    cost = ((a[:, None] - b[None]) ** 2).sum(-1)
    rows, cols = linear_sum_assignment(cost)
    assert M.w2_point_clouds(a, b) == pytest.approx(np.sqrt(cost[rows, cols].mean()), rel=1e-7)


def test_w2_in_one_dimension_is_sorted_matching_and_unequal_sizes_match_replication():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(10, 1)), rng.exponential(size=(10, 1))
    assert M.w2_point_clouds(a, b) == pytest.approx(np.sqrt(np.mean((np.sort(a[:, 0]) - np.sort(b[:, 0])) ** 2)))
    c, e = rng.normal(size=(2, 2)), rng.normal(size=(3, 2))
    rep_c, rep_e = np.repeat(c, 3, 0), np.repeat(e, 2, 0)
    brute = min(np.mean(((rep_c - rep_e[list(p)]) ** 2).sum(-1)) for p in itertools.permutations(range(6)))
    assert M.w2_point_clouds(c, e) == pytest.approx(np.sqrt(brute), rel=1e-7)


def test_rmwd_self_zero_and_isotropic_closed_form():
    x = _traj(5, frames=200, atoms=4)
    assert M.rmwd(x, x) == pytest.approx(0, abs=1e-6)
    s1, s2 = 0.7 * np.eye(3), 1.9 * np.eye(3)
    m, v = M.gaussian_w2(np.zeros((1, 3)), (s1**2)[None], np.ones((1, 3)), (s2**2)[None])
    assert v[0] == pytest.approx(np.sqrt(3) * abs(0.7 - 1.9)) and m[0] == pytest.approx(np.sqrt(3))


def test_pca_w2_zero_for_identical_ensembles_and_positive_otherwise():
    x = _traj(6, frames=40)
    assert M.pca_w2(x, x, x) == pytest.approx(0, abs=1e-6)
    assert M.pca_w2(x, x, x + np.random.default_rng(0).normal(scale=2, size=x.shape), joint=True) > 0.1


def test_cfre_closed_forms():
    x = _traj(8, frames=100, atoms=5)
    assert M.cfre(x, x) == pytest.approx(0, abs=1e-12)
    scaled = x.mean(0) + np.sqrt(2) * (x - x.mean(0))  # covariance doubled
    assert M.cfre(x, scaled) == pytest.approx(1.0)


def test_psd_logcorr_is_one_for_the_md_trajectory_itself_and_lower_for_white_noise():
    x = _traj(9, frames=64, atoms=10)
    assert M.pca_psd_logcorr(x, [x], x, k=3) == pytest.approx(1.0)
    rng = np.random.default_rng(1)
    shuffled = x[rng.permutation(len(x))]
    assert M.pca_psd_logcorr(x, [shuffled], x, k=3) < 0.9
