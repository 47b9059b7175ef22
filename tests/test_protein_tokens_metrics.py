"""APT's data windows, fold-class proxy and evaluation metrics against independent computations."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from repro.data.structures import Chain
from repro.data.structures.dssp import dssp_of_backbone
from repro.metrics.protein_geometry import build_backbone, distance_matrix, rmsd
from repro.papers.protein_tokens.data import fold_class, make_windows, window_starts
from repro.papers.protein_tokens.evaluate import classical_mds, per_group, window_rmsd

RULES = {"alpha_helix_min": 0.4, "alpha_strand_max": 0.1, "beta_strand_min": 0.3, "beta_helix_max": 0.1}


def test_fold_class_proxy_follows_the_dssp_content_rules():
    assert fold_class("H" * 5 + "C" * 5, RULES) == 0
    assert fold_class("E" * 4 + "C" * 6, RULES) == 1
    assert fold_class("H" * 4 + "E" * 4 + "CC", RULES) == 2
    assert fold_class("H" * 4 + "E" * 1 + "C" * 5, RULES) == 2  # strand 10 % is not < 10 %


def test_windows_cover_chains_pad_short_ones_and_keep_the_chain_split():
    assert window_starts(40, 16, 8) == [0, 8, 16, 24]
    assert window_starts(43, 16, 8) == [0, 8, 16, 24, 27]
    assert window_starts(10, 16, 8) == [0]
    helix = np.deg2rad([-57.0, -47.0])
    long = build_backbone(np.full(40, helix[0]), np.full(40, helix[1]))
    chains = [
        Chain("a", "A" * 40, long, "H" * 40, "x.pdb", "CC0", "train"),
        Chain("b", "G" * 12, long[:12], "E" * 12, "y.pdb", "CC0", "test"),
        Chain("c", "G" * 5, long[:5], "C" * 5, "z.pdb", "CC0", "val"),
    ]
    w = make_windows(chains, {"window": 16, "stride": 8, "min_length": 10, "fold_class": RULES})
    assert w["backbone"].shape == (5, 16, 3, 3)
    assert w["split"].tolist() == [0, 0, 0, 0, 2] and w["label"].tolist() == [0, 0, 0, 0, 1]
    assert w["mask"][-1].sum() == 12 and not w["backbone"][-1, 12:].any()
    assert w["chain_ids"].tolist() == ["a", "b"] and len(set(w["group"].tolist())) == 2


def test_windows_are_built_in_place_without_a_second_copy():
    """The window arrays are allocated once at their final size: the peak traced while building them stays
    within 1.3x of what they hold (stacking per-window arrays at the end would peak above 2x)."""
    import tracemalloc

    helix = np.deg2rad([-57.0, -47.0])
    long = build_backbone(np.full(400, helix[0]), np.full(400, helix[1]))
    chains = [Chain(f"c{i}", "A" * 400, long, "H" * 400, "x.pdb", "CC0", "train") for i in range(20)]
    settings = {"window": 32, "stride": 4, "min_length": 10, "fold_class": RULES}
    tracemalloc.start()
    try:
        w = make_windows(chains, settings)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    held = sum(a.nbytes for a in w.values())
    assert len(w["split"]) == 20 * 93 and peak < 1.3 * held, (peak, held)


def test_window_rmsd_ignores_padding_and_per_group_averages():
    rng = np.random.default_rng(0)
    true = rng.normal(0, 5, (2, 10, 3))
    pred = true + rng.normal(0, 1, true.shape)
    mask = np.ones((2, 10))
    mask[1, 6:] = 0
    pred[1, 6:] = 1e3
    values = window_rmsd(pred, true, mask)
    assert values[1] == pytest.approx(rmsd(pred[1, :6], true[1, :6]))
    np.testing.assert_allclose(per_group(np.array([1.0, 3.0, 5.0]), np.array([2, 2, 7])), [2.0, 5.0])


def test_classical_mds_recovers_a_structure_up_to_a_rigid_motion_or_mirror():
    x = np.random.default_rng(1).normal(0, 5, (20, 3))
    y = classical_mds(distance_matrix(x @ Rotation.random(random_state=2).as_matrix().T))
    assert min(rmsd(y, x), rmsd(y * np.array([-1.0, 1.0, 1.0]), x)) < 1e-6


def test_backbone_only_dssp_finds_an_ideal_helix_and_strand():
    helix = build_backbone(np.full(20, np.deg2rad(-57.0)), np.full(20, np.deg2rad(-47.0)))
    assert dssp_of_backbone(helix)[3:16] == "H" * 13
    extended = build_backbone(np.full(20, np.deg2rad(-120.0)), np.full(20, np.deg2rad(130.0)))
    assert "H" not in dssp_of_backbone(extended)


def _windows(tmp_path, n, length=24, seed=0):
    """``n`` helical windows with noise, in the windows folder layout (memory-mapped when read back)."""
    from repro.papers.protein_tokens.arrays import open_arrays, write_arrays

    rng = np.random.default_rng(seed)
    helix = np.deg2rad([-57.0, -47.0])
    bb = np.stack([build_backbone(helix[0] + rng.normal(0, 0.4, length), helix[1] + rng.normal(0, 0.4, length))
                   for _ in range(n)]).astype(np.float32)  # fmt: skip
    split = np.where(np.arange(n) % 4 == 0, 2, 0).astype(np.int8)
    write_arrays(tmp_path / f"w{n}", {"backbone": bb, "mask": np.ones((n, length), np.float32), "split": split})
    return open_arrays(tmp_path / f"w{n}")


def test_streamed_pca_baseline_matches_a_full_pca_and_keeps_memory_flat(tmp_path):
    import tracemalloc

    from repro.papers.protein_tokens.evaluate import pca_baseline

    settings = {"batch": 16, "pca_fit_windows": 10_000}
    small = _windows(tmp_path, 80)
    held = np.flatnonzero(small["split"] > 0)
    streamed = pca_baseline(small, held, [4, 4], 2, settings)
    one_batch = pca_baseline(small, held, [4, 4], 2, settings | {"batch": 1000})  # an exact PCA in one go
    assert streamed["components"] == 4 and streamed["windows"] == held.size
    assert np.all(np.isfinite(streamed["rmsd"]))
    assert np.mean(streamed["rmsd"]) == pytest.approx(np.mean(one_batch["rmsd"]), abs=0.05)
    peaks = []
    for n in (200, 800):
        windows = _windows(tmp_path, n, seed=1)
        tracemalloc.start()
        pca_baseline(windows, np.flatnonzero(windows["split"] > 0), [4, 4], 2, settings)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.5 * peaks[0], f"peak memory grew with the windows: {peaks}"


def _grouped_windows(groups=24, per_group=6, seed=0):
    """Windows of ``groups`` sequence groups (two chains each, like the models of an NMR ensemble), each group
    with a random fold-class label and a feature vector of its own (the same for its windows, plus noise)."""
    rng = np.random.default_rng(seed)
    group = np.repeat(np.arange(groups), per_group)
    chain = 2 * group + np.arange(group.size) % 2
    label = rng.integers(0, 3, groups)[group]
    identity = rng.normal(0, 1, (groups, 6))[group] + rng.normal(0, 0.01, (group.size, 6))
    return group, chain, label, identity


def test_probe_folds_never_put_a_protein_in_both_a_fit_and_its_evaluation():
    from repro.papers.protein_tokens.evaluate import fit_rows, probe_folds

    group, chain, *_ = _grouped_windows()
    folds = probe_folds(group, 5)
    assert sorted(np.unique(folds).tolist()) == [0, 1, 2, 3, 4]  # every window scored by exactly one fold
    for f, rows in enumerate(fit_rows(folds, limit=50, seed=0)):
        scored = folds == f
        assert 0 < len(rows) <= 50 and not scored[rows].any()
        assert not set(group[rows]) & set(group[scored]) and not set(chain[rows]) & set(chain[scored])
    assert np.unique(probe_folds(group[:12], 5)).size == 2  # two groups: at most two folds
    with pytest.raises(ValueError, match="two sequence groups"):
        probe_folds(np.zeros(6, int), 5)


def test_cross_fitted_probe_cannot_read_a_label_off_its_own_protein():
    """Features that name the protein but say nothing about its class: a probe that had seen the protein
    would be right on nearly every window; the cross-fitted one stays near chance. Features that carry the
    class are read."""
    from repro.papers.protein_tokens.evaluate import cross_fitted, fit_rows, prior_predictions, probe_folds, scores

    group, _, label, identity = _grouped_windows()
    folds = probe_folds(group, 4)
    fits = fit_rows(folds, limit=10_000, seed=0)
    settings = {"hidden": 32, "alpha": 1e-3, "max_iter": 300}
    codes = identity[:, None, :].astype(np.float32)  # [N, K = 1, c]
    blind = scores(cross_fitted(codes, label, folds, fits, settings, 0, batch=7), label)
    assert blind["accuracy"] < 0.6
    by_window = np.arange(label.size) % 4  # folds that split proteins: the probe reads the label off the protein
    leaky = cross_fitted(codes, label, by_window, fit_rows(by_window, 10_000, 0), settings, 0, 7)
    assert scores(leaky, label)["accuracy"] > 0.8
    informative = np.concatenate([3 * np.eye(3, dtype=np.float32)[label][:, None, :], codes], axis=-1)
    read = scores(cross_fitted(informative, label, folds, fits, settings, 0, batch=7), label)
    assert read["accuracy"] > 0.9
    prior = prior_predictions(label, folds, fits)
    for f, rows in enumerate(fits):
        assert np.all(prior[folds == f] == np.argmax(np.bincount(label[rows])))
