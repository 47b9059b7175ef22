"""Backbone windows, their torsion representation and the generator-independent scores, each against an
independent computation."""

from types import SimpleNamespace as NS

import numpy as np
import pytest
from geocoupling_chains import SETTINGS, write_chains

from repro.data.structures import read_chains
from repro.metrics.protein_geometry import ANGLE, BOND, backbone_dihedrals, build_backbone, rmsd
from repro.papers.geocoupling import data, scores
from repro.papers.geocoupling.windows import Standardiser, build, features, internal, windows
from repro.workflow.io import InputError


@pytest.fixture(scope="module")
def chains(tmp_path_factory):
    return read_chains(write_chains(tmp_path_factory.mktemp("chains") / "chains.parquet"))


@pytest.fixture(scope="module")
def bench(chains):
    return data.window_arrays(chains, SETTINGS)


def test_windows_skip_breaks_and_unknown_residues(chains):
    chain = chains[0]
    broken = NS(**vars(chain))
    broken.backbone = chain.backbone.copy()
    broken.backbone[10:] += np.array([5.0, 0.0, 0.0], np.float32)  # a 5 Å gap between residues 9 and 10
    broken.sequence = chain.sequence[:20] + "X" + chain.sequence[21:]
    seq, bb, ids = windows([broken], chain.split, 8, 1)
    starts = [int(i.split(":")[1]) for i in ids]
    assert all(not (s <= 9 < s + 7) and not (s <= 20 < s + 8) for s in starts) and len(starts) > 0
    np.testing.assert_array_equal(bb[0], broken.backbone[starts[0] : starts[0] + 8])


def test_internal_coordinates_match_backbone_dihedrals(chains):
    bb = chains[0].backbone[:8].astype(np.float64)
    lengths, angles, torsions = internal(bb[None])
    phi, psi = backbone_dihedrals(bb)
    np.testing.assert_allclose(torsions[0, 2::3], phi[1:], atol=1e-9)
    np.testing.assert_allclose(torsions[0, 0::3], psi[:-1], atol=1e-9)
    assert np.allclose(lengths[0, ::3], BOND["N-CA"], atol=1e-4) and np.allclose(angles[0, ::3], ANGLE["N-CA-C"])


def test_decoding_rebuilds_the_torsions_with_ideal_geometry(bench):
    real = bench["test_backbone"][:5].astype(np.float64)
    standard = Standardiser(bench["feature_mean"], bench["feature_scale"])
    rebuilt = standard.decode(standard.encode(real), 8)
    np.testing.assert_allclose(internal(rebuilt)[2], internal(real)[2], atol=1e-8)
    # the tiny chains were built with the same ideal geometry: the rebuilt window is the real one, moved
    assert max(rmsd(a.reshape(-1, 3), b.reshape(-1, 3)) for a, b in zip(rebuilt, real)) < 1e-4
    assert build(features(real), 8).shape == real.shape


def test_nearest_rmsd_equals_a_brute_force_kabsch_search(bench):
    gen = bench["test_backbone"][:6].astype(np.float64) + np.random.default_rng(0).normal(0, 0.3, (6, 8, 3, 3))
    ref = bench["val_backbone"].astype(np.float64)
    brute = [min(rmsd(g.reshape(-1, 3), r.reshape(-1, 3)) for r in ref) for g in gen]
    np.testing.assert_allclose(scores.nearest_rmsd(gen, ref, len(ref)), brute, atol=1e-6)
    assert np.all(scores.nearest_rmsd(gen, ref, 1) >= np.asarray(brute) - 1e-9)


def test_validity_accepts_real_windows_and_refuses_clashes_and_bad_torsions(bench):
    scorer = scores.Scorer(bench, 8)
    real = bench["test_backbone"].astype(np.float64)
    assert scorer.validity(real).mean() > 0.9
    phi = np.full(8, np.deg2rad(-62.0))
    folded = build_backbone(phi, np.full(8, np.deg2rad(-41.0)))[None].astype(np.float64)
    clash = build_backbone(np.full(8, 0.0), np.full(8, 0.0))[None].astype(np.float64)  # a collapsed ring
    cis = build_backbone(phi, np.full(8, np.deg2rad(-41.0)), omega=np.deg2rad(90.0))[None].astype(np.float64)
    assert scorer.validity(folded)[0] and not scorer.validity(clash)[0] and not scorer.validity(cis)[0]
    assert scores.closest_nonbonded(clash)[0] < scorer.clash


def test_consistency_is_pointwise_mutual_information_and_real_pairs_beat_shuffled_ones(bench):
    scorer = scores.Scorer(bench, 8)
    seq, bb = bench["test_seq"], bench["test_backbone"].astype(np.float64)
    classes = scores.dssp_classes(bb)
    p = scorer.class_probabilities(seq)
    manual = np.mean(np.log(np.take_along_axis(p, classes[..., None], -1)[..., 0]) - scorer.log_prior[classes], -1)
    np.testing.assert_allclose(scorer.consistency(seq, classes), manual)
    detail = scorer.per_sample(seq, bb, "val")
    assert detail["consistency"].mean() > detail["consistency_shuffled"].mean() + 0.1
    assert np.allclose(p.sum(-1), 1.0)


def test_dssp_classes_find_an_ideal_helix():
    helix = build_backbone(np.full(12, np.deg2rad(-62.0)), np.full(12, np.deg2rad(-41.0)))[None]
    classes = scores.dssp_classes(helix.astype(np.float64))
    assert (classes[0, 2:-2] == scores.CLASSES.index("H")).all()


def test_mean_pairwise_matches_scipy():
    from scipy.spatial.distance import pdist

    x = np.random.default_rng(0).integers(0, 20, (30, 8))
    assert scores.mean_pairwise(x, "hamming") == pytest.approx(pdist(x, "hamming").mean())
    y = np.random.default_rng(1).normal(size=(30, 5))
    assert scores.mean_pairwise(y, "euclid_rms") == pytest.approx((pdist(y) / np.sqrt(5)).mean())


def test_too_few_windows_are_named(chains, tmp_path):
    out = NS(benchmark=str(tmp_path / "b.npz"), lattice=str(tmp_path / "l.npz"), manifest=str(tmp_path / "m.json"))
    settings = SETTINGS | {"windows": {"width": 41, "stride": 1}}  # longer than every chain
    path = write_chains(tmp_path / "chains.parquet")
    with pytest.raises(InputError, match="too few windows"):
        data.main(NS(params=NS(settings=settings), input=NS(chains=path), output=out))
