"""Shared protein geometry against independent references: tmtools (TM-align), mdtraj torsions, brute force."""

import mdtraj as md
import numpy as np
import pytest
import tmtools
from scipy.spatial.transform import Rotation

from repro.metrics.protein_geometry import (
    backbone_dihedrals,
    backbone_from_atom14,
    build_backbone,
    contact_map,
    kabsch,
    rmsd,
    superpose,
    tm_score,
)

RNG = np.random.default_rng(0)


def random_backbone(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return build_backbone(rng.uniform(-np.pi, np.pi, n), rng.uniform(-np.pi, np.pi, n)).astype(np.float64)


def test_kabsch_recovers_a_rigid_motion_and_rmsd_is_invariant():
    x = random_backbone()[:, 1]
    rotation = Rotation.random(random_state=1).as_matrix()
    y = x @ rotation.T + np.array([3.0, -7.0, 11.0])
    r, t = kabsch(x, y)
    np.testing.assert_allclose(r, rotation, atol=1e-8)
    assert np.linalg.det(r) == pytest.approx(1.0)
    np.testing.assert_allclose(superpose(x, y), y, atol=1e-8)
    noisy = x + RNG.normal(0, 1.0, x.shape)
    assert rmsd(noisy @ rotation.T + 5.0, x) == pytest.approx(rmsd(noisy, x), abs=1e-6)
    assert rmsd(noisy, x) <= rmsd(noisy, x, align=False)


def test_kabsch_returns_a_rotation_not_a_reflection():
    x = random_backbone()[:, 1]
    mirrored = x * np.array([-1.0, 1.0, 1.0])
    r, _ = kabsch(x, mirrored)
    assert np.linalg.det(r) == pytest.approx(1.0)
    assert rmsd(x, mirrored) > 0.5


@pytest.mark.parametrize("noise", [0.5, 2.0, 4.0])
def test_tm_score_matches_tmtools_with_the_identity_alignment(noise):
    native = random_backbone(80, seed=2)[:, 1]
    model = native + np.random.default_rng(3).normal(0, noise, native.shape)
    seq = "A" * len(native)
    reference = tmtools.tm_align(model, native, seq, seq, [seq, seq]).tm_norm_chain2
    assert tm_score(model, native) == pytest.approx(reference, abs=0.01)
    assert tm_score(native, native) == pytest.approx(1.0)


def test_backbone_dihedrals_match_mdtraj_and_invert_build_backbone():
    phi_in, psi_in = RNG.uniform(-np.pi, np.pi, 30), RNG.uniform(-np.pi, np.pi, 30)
    bb = build_backbone(phi_in, psi_in)
    phi, psi = backbone_dihedrals(bb)
    assert np.isnan(phi[0]) and np.isnan(psi[-1])
    wrap = lambda a: np.angle(np.exp(1j * a))  # noqa: E731
    np.testing.assert_allclose(wrap(phi[1:] - phi_in[1:]), 0, atol=1e-5)
    np.testing.assert_allclose(wrap(psi[:-1] - psi_in[:-1]), 0, atol=1e-5)
    top = md.Topology()
    chain = top.add_chain()
    for _ in range(len(bb)):
        residue = top.add_residue("ALA", chain)
        for name, element in (("N", "N"), ("CA", "C"), ("C", "C")):
            top.add_atom(name, md.element.get_by_symbol(element), residue)
    traj = md.Trajectory(bb.reshape(1, -1, 3) / 10.0, top)
    np.testing.assert_allclose(md.compute_phi(traj)[1][0], phi[1:], atol=1e-4)
    np.testing.assert_allclose(md.compute_psi(traj)[1][0], psi[:-1], atol=1e-4)


def test_contact_map_against_brute_force_and_atom14_slice():
    ca = random_backbone(25)[:, 1]
    contacts = contact_map(ca, cutoff=8.0, min_separation=3)
    for i in range(25):
        for j in range(25):
            assert contacts[i, j] == (np.linalg.norm(ca[i] - ca[j]) < 8.0 and abs(i - j) >= 3)
    xyz14 = np.arange(2 * 14 * 3, dtype=float).reshape(2, 14, 3)
    np.testing.assert_array_equal(backbone_from_atom14(xyz14), xyz14[:, :3])
