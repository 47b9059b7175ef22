"""Derived digit benchmarks: each transform against a known answer or invariant, seeded reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from repro.data.images import derived


def bars(widths: list[int], size: int = 28, length: int = 20) -> np.ndarray:
    """Vertical bars of the given widths (a stroke of known thickness)."""
    out = np.zeros((len(widths), size, size), np.float32)
    for i, w in enumerate(widths):
        out[i, 4 : 4 + length, 12 : 12 + w] = 1.0
    return out


def test_rotation_by_90_degrees_is_a_transpose_and_batch_matches_single():
    x = np.random.default_rng(0).random((3, 9, 9)).astype(np.float32)
    r = derived.rotate(x, 90.0)
    np.testing.assert_allclose(r, np.rot90(x, k=1, axes=(1, 2)), atol=1e-5)
    per_image = derived.rotate(x, np.array([90.0, 90.0, 0.0]))
    np.testing.assert_allclose(per_image[:2], r[:2], atol=1e-6)
    np.testing.assert_allclose(per_image[2], x[2], atol=1e-6)


def test_domains_keep_values_in_range_and_match_their_definitions():
    x = bars([3, 5])
    rng = np.random.default_rng(1)
    np.testing.assert_array_equal(derived.apply_domain(x, "invert", rng), 1.0 - x)
    blurred = derived.apply_domain(x, "blur:1.0", rng)
    np.testing.assert_allclose(blurred.sum(axis=(1, 2)), x.sum(axis=(1, 2)), rtol=1e-4)  # mass kept
    noisy = derived.apply_domain(np.full((50, 10, 10), 0.5, np.float32), "noise:0.1", rng)
    assert 0.09 < noisy.std() < 0.11 and noisy.min() >= 0 and noisy.max() <= 1
    red = derived.apply_domain(x, "colour:red", rng)
    assert red.shape == (2, 3, 28, 28)
    np.testing.assert_array_equal(red[:, 0], x)
    assert red[:, 1:].max() == 0
    thick = derived.apply_domain(x, "dilate:3", rng)
    np.testing.assert_allclose(derived.stroke_thickness_target(thick), [5.0, 7.0])


def test_domain_sequence_tasks_shapes_shards_and_seed():
    x, y = np.random.default_rng(0).random((12, 8, 8)).astype(np.float32), np.arange(12) % 3
    domains = ["rotate:45", "noise:0.2", "colour:blue"]
    tasks = derived.domain_sequence(x, y, domains, seed=3)
    assert [t[0].shape for t in tasks] == [(12, 3, 8, 8)] * 3
    np.testing.assert_array_equal(tasks[0][0][:, 0], tasks[0][0][:, 2])  # grey domains as equal channels
    again = derived.domain_sequence(x, y, domains, seed=3)
    np.testing.assert_array_equal(tasks[1][0], again[1][0])
    assert not np.array_equal(tasks[1][0], derived.domain_sequence(x, y, domains, seed=4)[1][0])
    shards = derived.domain_sequence(x, y, ["invert", "blur:1"], seed=0, disjoint=True)
    assert sum(len(t[1]) for t in shards) == 12
    assert shards[0][0].shape == (6, 8, 8)
    with pytest.raises(ValueError, match="unknown domain"):
        derived.domain_sequence(x, y, ["shear:3"], seed=0)
    with pytest.raises(ValueError, match="unknown colour"):
        derived.domain_sequence(x, y, ["colour:teal"], seed=0)


def test_coloured_spurious_correlation_groups_and_pixels():
    n = 4000
    x, y = np.random.default_rng(0).random((n, 4, 4)).astype(np.float32), np.arange(n) % 10
    images, labels, spurious, group = derived.coloured_spurious(x, y, correlation=0.9, seed=0)
    aligned = spurious == labels
    # Aligned ~ Binomial(n, 0.9) (conflicting colours never equal the label): within 4 sd.
    assert abs(aligned.mean() - 0.9) < 4 * np.sqrt(0.09 / n)
    np.testing.assert_array_equal(group, labels * 10 + spurious)
    np.testing.assert_allclose(images, x[:, None] * derived.PALETTE[spurious][:, :, None, None])
    # Conflicting images spread over all nine other colours.
    assert len(np.unique(spurious[~aligned & (labels == 0)])) == 9
    again = derived.coloured_spurious(x, y, correlation=0.9, seed=0)
    np.testing.assert_array_equal(again[2], spurious)


def test_rotation_regression_targets_are_the_applied_angles():
    x = np.random.default_rng(0).random((5, 9, 9)).astype(np.float32)
    rotated, angles = derived.rotation_regression(x, (-45, 45), seed=0)
    assert angles.min() >= -45 and angles.max() <= 45
    np.testing.assert_allclose(rotated, derived.rotate(x, angles), atol=1e-6)


def test_stroke_thickness_of_bars_is_their_width_and_blank_is_zero():
    np.testing.assert_allclose(derived.stroke_thickness_target(bars([1, 2, 4, 6])), [1, 2, 4, 6])
    assert derived.stroke_thickness_target(np.zeros((1, 5, 5)))[0] == 0
