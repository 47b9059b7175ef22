"""IWFD: exact invertibility (property tests), Parseval, band truncation, anchored windows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repro.papers.biodynaspec.data import from_slots, to_slots
from repro.papers.biodynaspec.iwfd import anchored_windows, compose_windows, inverse_windowed_rfft, windowed_rfft
from repro.papers.biodynaspec.spectral_checks import band_truncation_errors, parseval_deviation


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(8, 90),
    size=st.integers(2, 24),
    hop_fraction=st.sampled_from([1.0, 0.5, 0.25]),
    window=st.sampled_from(["boxcar", "hamming"]),
    seed=st.integers(0, 2**31),
)
def test_windowed_rfft_is_exactly_invertible(n, size, hop_fraction, window, seed):
    size = min(size, n)
    hop = max(1, int(size * hop_fraction))
    x = np.random.default_rng(seed).normal(size=(n, 5, 3)).astype(np.float32) * 30
    back = inverse_windowed_rfft(windowed_rfft(x, size, hop, window), n, size, hop, window)
    np.testing.assert_allclose(back, x, atol=1e-5 * 30)


def test_uncovered_samples_are_refused():
    x = np.ones((10, 1, 3))
    coeffs = windowed_rfft(x, 4, 4)
    with pytest.raises(ValueError, match="shorter than one window"):
        windowed_rfft(x, 12, 12)
    assert coeffs.shape == (3, 3, 1, 3)  # windows at 0, 4 and a tail window at 6


@settings(max_examples=30, deadline=None)
@given(size=st.integers(2, 20), seed=st.integers(0, 2**31))
def test_parseval_and_truncation_monotone(size, seed):
    delta = np.random.default_rng(seed).normal(size=(3, size, 4, 3))
    assert parseval_deviation(delta) < 1e-12
    errors = band_truncation_errors(delta)
    assert np.all(np.diff(errors) <= 1e-12) and errors[-1] < 1e-12


@pytest.mark.parametrize("representation", ["spectral", "time"])
def test_slots_round_trip(representation):
    delta = np.random.default_rng(1).normal(size=(2, 16, 7, 3))
    np.testing.assert_allclose(from_slots(to_slots(delta, representation), representation, 16), delta, atol=1e-12)


def test_anchored_windows_compose_back_for_an_aligned_trajectory():
    rng = np.random.default_rng(2)
    base = rng.normal(size=(12, 3)) * 10
    traj = base[None] + np.cumsum(rng.normal(scale=0.05, size=(33, 12, 3)), axis=0)
    traj -= traj.mean(1, keepdims=True) - base.mean(0)  # keep the centroid fixed
    anchors, deltas = anchored_windows(traj, 8)
    assert anchors.shape == (4, 12, 3) and deltas.shape == (4, 8, 12, 3)
    np.testing.assert_allclose(anchors[1], traj[8])
    rebuilt = compose_windows(traj[0], deltas)
    # frames are Kabsch-aligned on their anchor, so compare after removing rigid motion frame by frame
    from repro.papers.biodynaspec.geometry import rmsd_after_superposition

    assert rebuilt.shape == traj.shape
    assert rmsd_after_superposition(rebuilt, traj).max() < 0.05
