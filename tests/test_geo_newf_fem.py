"""Mesh generation, boundary tagging, P1 assembly and the reference nonlinear solver, against scikit-fem and a
manufactured solution."""

import numpy as np
import pytest
from skfem import Basis, BilinearForm, ElementTriP1, LinearForm, MeshTri
from skfem.helpers import dot, grad

from repro.papers.geo_newf import fem
from repro.papers.geo_newf.meshes import make_sample, reference_mesh, side_tags, solve_nonlinear

SETTINGS = {
    "refine": {"square": 2, "lshape": 2},
    "neumann_scale": 1.0,
    "source_modes": 3,
    "source_scale": 6.0,
    "beta": 1.0,
}


@pytest.fixture(scope="module")
def sample():
    return make_sample("square", 0.1, SETTINGS, np.random.default_rng(0))


def test_sides_are_tagged_by_outward_normal():
    mesh = reference_mesh("lshape", 2)
    ends, side = side_tags(mesh)
    mid = mesh.p[:, ends].mean(axis=2).T
    np.testing.assert_allclose(mid[side == 0, 0], 0.0)  # left
    np.testing.assert_allclose(mid[side == 2, 1], 0.0)  # bottom
    assert set(np.round(mid[side == 1, 0], 6)) == {0.5, 1.0}  # right, including the re-entrant face
    assert set(side) == {0, 1, 2, 3}


def test_p1_mass_and_residual_match_scikit_fem(sample):
    mesh = MeshTri(sample.nodes.T, sample.cells.T)
    basis = Basis(mesh, ElementTriP1())
    mass = BilinearForm(lambda u, v, w: u * v).assemble(basis)
    assert abs(fem.mass_matrix(sample.nodes, sample.cells) - mass).max() < 1e-15
    u = np.random.default_rng(1).normal(size=len(sample.nodes))

    @LinearForm
    def flux(v, w):
        g = w["u"].grad
        return (1 + 2.0 * dot(g, g)) * dot(g, grad(v))

    ref = flux.assemble(basis, u=basis.interpolate(u)) - sample.load
    np.testing.assert_allclose(fem.residual(u, sample.nodes, sample.cells, sample.load, 2.0), ref, atol=1e-10)


def test_reference_solution_balances_every_free_node(sample):
    r = fem.residual(sample.u, sample.nodes, sample.cells, sample.load, SETTINGS["beta"])
    assert np.max(np.abs(r[~sample.dirichlet])) < 1e-9 * np.max(np.abs(sample.load))
    assert np.all(sample.u[sample.dirichlet] == 0.0)


def test_warped_meshes_do_not_fold():
    s = make_sample("square", 0.2, SETTINGS, np.random.default_rng(4))
    _, areas = fem.p1_geometry(s.nodes, s.cells)
    assert np.all(areas > 0) and s.nodes.shape == (41, 2)


@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_reference_solver_converges_to_a_manufactured_solution(beta):
    """u = sin(pi x), u = 0 left and right, zero flux top and bottom: the L2 error falls like h^2."""
    errors = []
    for refine in (3, 4):
        mesh = MeshTri.init_symmetric().refined(refine)
        basis = Basis(mesh, ElementTriP1())

        def f(x):
            return np.pi**2 * np.sin(np.pi * x) * (1 + 3 * beta * np.pi**2 * np.cos(np.pi * x) ** 2)

        load = LinearForm(lambda v, w: f(w.x[0]) * v).assemble(basis)
        dirichlet = np.isclose(mesh.p[0], 0.0) | np.isclose(mesh.p[0], 1.0)
        u, _ = solve_nonlinear(mesh, dirichlet, load, beta)
        errors.append(fem.relative_l2(u, np.sin(np.pi * mesh.p[0]), fem.mass_matrix(mesh.p.T, mesh.t.T)))
    assert errors[1] < errors[0] / 3 and errors[1] < 5e-3


def test_relative_l2_is_mass_weighted():
    nodes = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    cells = np.array([[0, 1, 2]])
    mass = fem.mass_matrix(nodes, cells)
    ones = np.ones(3)
    # int 1 = 1/2 on the triangle, so ||1||_M^2 = 1/2 and ||2 - 1||_M / ||1||_M = 1
    assert ones @ (mass @ ones) == pytest.approx(0.5)
    assert fem.relative_l2(2 * ones, ones, mass) == pytest.approx(1.0)
