"""Constraint manifolds, the normal-space perturbation and the distances, against independent computations."""

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from repro.papers.constrained_generative.manifolds import (
    graph_points,
    manifold,
    sphere_points,
    torus_points,
)
from repro.papers.constrained_generative.metrics import (
    directions,
    divergence_rate,
    mmd2,
    perturbation_checks,
    sliced_wasserstein,
)

RNG = np.random.default_rng(0)
POINTS = {
    "sphere": sphere_points(RNG.uniform(-90, 90, 50), RNG.uniform(-180, 180, 50)),
    "torus": torus_points(RNG.uniform(-np.pi, np.pi, 50), RNG.uniform(-np.pi, np.pi, 50)),
    "graph": graph_points(RNG.uniform(-1.5, 1.5, (50, 2))),
}


@pytest.mark.parametrize("name", sorted(POINTS))
def test_points_satisfy_the_constraints_and_jacobians_match_finite_differences(name):
    geom, z = manifold(name), POINTS[name]
    assert np.abs(geom.h(z)).max() < 1e-12
    step = 1e-6
    numeric = np.stack([(geom.h(z + step * e) - geom.h(z - step * e)) / (2 * step) for e in np.eye(geom.d)], axis=-1)
    np.testing.assert_allclose(geom.jacobian(z), numeric, atol=1e-6)


@pytest.mark.parametrize("name", sorted(POINTS))
def test_normal_perturbation_checks(name):
    checks = perturbation_checks(manifold(name), POINTS[name], [1e-3, 3e-3, 1e-2, 3e-2], 0)
    assert checks["tangent_component_max"] < 1e-12 and checks["eps_recovery_error_max"] < 1e-12
    assert checks["projection_error_slope"] > 1.8 and abs(checks["violation_slope"] - 1) < 0.05


def test_isotropic_noise_moves_along_the_manifold_and_normal_noise_does_not():
    geom, z = manifold("sphere"), POINTS["sphere"]
    for kind, tangent_expected in (("isotropic", True), ("normal", False), ("tangent", True)):
        x, _ = geom.perturb(z, kind, 0.1, np.random.default_rng(1))
        moved = np.linalg.norm(geom.project(x, 10) - z, axis=1).mean()
        assert (moved > 0.02) == tangent_expected, kind
    with pytest.raises(ValueError, match="unknown perturbation"):
        geom.perturb(z, "radial", 0.1, RNG)


def test_mmd_equals_a_direct_double_sum():
    x, y = RNG.normal(size=(20, 3)), RNG.normal(size=(15, 3)) + 0.5
    k = lambda a, b: np.exp(-np.sum((a - b) ** 2) / (2 * 0.7**2))  # noqa: E731
    xx = sum(k(a, b) for i, a in enumerate(x) for j, b in enumerate(x) if i != j) / (20 * 19)
    yy = sum(k(a, b) for i, a in enumerate(y) for j, b in enumerate(y) if i != j) / (15 * 14)
    xy = sum(k(a, b) for a in x for b in y) / (20 * 15)
    assert mmd2(x, y, 0.7) == pytest.approx(xx + yy - 2 * xy)
    assert np.isnan(mmd2(np.full((3, 3), np.nan), y, 0.7))


def test_sliced_w1_matches_scipy_per_direction():
    x, y = RNG.normal(size=(200, 3)), RNG.normal(size=(200, 3)) * 1.5
    dirs = directions(3, 5, 0)
    expected = np.mean([wasserstein_distance(x @ v, y @ v) for v in dirs])
    assert sliced_wasserstein(x, y, dirs, p=1) == pytest.approx(expected, rel=1e-9)


def test_divergence_rate():
    assert divergence_rate(np.linspace(0, -10, 20), 1e3) == pytest.approx(10 / 19)
    assert divergence_rate(np.array([1.0, np.nan]), 1e3) == 1e3
