"""Families of deformed 2-D domains and the reference finite-element solution on each (scikit-fem, P1).

The PDE is steady nonlinear (Forchheimer-type) Darcy flow: -div q(grad u) = f with the strongly monotone flux
q(g) = (1 + beta |g|^2) g, u = 0 on the Dirichlet sides and q . n = g_N (a constant per side) on the others.
Which of the four sides are Dirichlet, the Neumann fluxes and the smooth source f (a few Fourier modes) are
drawn per sample. Domains: the unit square (``MeshTri.init_symmetric``) warped by a smooth random map of a
given amplitude (in distribution up to ``id_amplitude``, out of distribution at ``ood_amplitude``) and the
L-shaped domain (out of distribution). Sides are tagged on the undeformed reference mesh by the outward
normal of each boundary facet (left, right, bottom, top), so the L-shape's re-entrant facets join the side
they face.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from skfem import Basis, BilinearForm, ElementTriP1, FacetBasis, LinearForm, MeshTri, condense, solve
from skfem.helpers import dot, grad

SIDES = ("left", "right", "bottom", "top")
DIRECTIONS = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, -1.0], [0.0, 1.0]])


@dataclass
class Sample:
    """One mesh with its boundary data and reference solution, in the canonical layout."""

    nodes: np.ndarray  # (n, 2)
    cells: np.ndarray  # (m, 3)
    facets: np.ndarray  # (b, 2) boundary facets
    facet_side: np.ndarray  # (b,) index into SIDES
    dirichlet: np.ndarray  # (n,) bool
    load: np.ndarray  # (n,) int f phi_a + int_{Gamma_N} g_N phi_a
    source: np.ndarray  # (n,) f at the nodes
    u: np.ndarray  # (n,) reference solution
    dirichlet_sides: np.ndarray  # (4,) bool
    neumann: np.ndarray  # (4,) g_N per side (0 on Dirichlet sides)
    family: str
    amplitude: float
    newton_iterations: int


def reference_mesh(family: str, refine: int) -> MeshTri:
    if family == "square":
        return MeshTri.init_symmetric().refined(refine)
    if family == "lshape":
        mesh = MeshTri.init_lshaped().refined(refine)
        return MeshTri((mesh.p + 1.0) / 2.0, mesh.t)
    raise ValueError(f"unknown domain family {family!r}; have square, lshape")


def side_tags(mesh: MeshTri) -> tuple[np.ndarray, np.ndarray]:
    """(boundary facets (b, 2), side index per facet) from outward normals of the reference mesh."""
    facets = mesh.boundary_facets()
    ends = mesh.facets[:, facets].T
    tangent = mesh.p[:, ends[:, 1]] - mesh.p[:, ends[:, 0]]
    normal = np.stack([tangent[1], -tangent[0]], axis=1)
    centroid = mesh.p[:, mesh.t[:, mesh.f2t[0, facets]]].mean(axis=1).T
    middle = mesh.p[:, ends].mean(axis=2).T
    normal *= np.sign(np.sum(normal * (middle - centroid), axis=1))[:, None]
    return ends, np.argmax(normal @ DIRECTIONS.T, axis=1)


def warp(points: np.ndarray, amplitude: float, rng: np.random.Generator) -> np.ndarray:
    """A smooth random displacement of the domain (points (2, n)) of the given amplitude."""
    c = rng.uniform(-1.0, 1.0, 4)
    phase = rng.uniform(0.0, 2 * np.pi, 2)
    x, y = points
    dx = c[0] * np.sin(np.pi * y + phase[0]) + c[1] * x * y
    dy = c[2] * np.sin(np.pi * x + phase[1]) + c[3] * x * y
    return points + amplitude * np.stack([dx, dy])


def signed_areas(points: np.ndarray, cells: np.ndarray) -> np.ndarray:
    a, b, c = (points[:, cells[k]] for k in range(3))
    return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))


def source_function(rng: np.random.Generator, modes: int, scale: float):
    """f(x, y) = scale * (a0 + sum_k a_k cos(pi (k1 x + k2 y) + phi_k)), a few low Fourier modes."""
    k = rng.integers(0, 3, size=(modes, 2))
    a = rng.uniform(-1.0, 1.0, modes)
    phi = rng.uniform(0.0, 2 * np.pi, modes)
    a0 = rng.uniform(0.5, 1.0)

    def f(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        out = a0 * np.ones_like(x)
        for (k1, k2), ak, pk in zip(k, a, phi):
            out = out + ak * np.cos(np.pi * (k1 * x + k2 * y) + pk)
        return scale * out

    return f


def solve_nonlinear(
    mesh: MeshTri, dirichlet: np.ndarray, load: np.ndarray, beta: float, tol: float = 1e-11, max_iter: int = 50
) -> tuple[np.ndarray, int]:
    """Newton for int q(grad u) . grad v = load(v), u = 0 on the Dirichlet nodes (scikit-fem assembly)."""
    basis = Basis(mesh, ElementTriP1())

    @BilinearForm
    def jacobian(du, v, w):
        g = w["prev"].grad
        return (1 + beta * dot(g, g)) * dot(grad(du), grad(v)) + 2 * beta * dot(g, grad(du)) * dot(g, grad(v))

    @LinearForm
    def flux(v, w):
        g = w["prev"].grad
        return (1 + beta * dot(g, g)) * dot(g, grad(v))

    u = np.zeros(mesh.p.shape[1])
    scale = max(float(np.max(np.abs(load))), 1e-300)
    dofs = np.flatnonzero(dirichlet)
    for it in range(max_iter):
        prev = basis.interpolate(u)
        residual = flux.assemble(basis, prev=prev) - load
        residual[dofs] = 0.0
        if np.max(np.abs(residual)) <= tol * scale:
            return u, it
        du = solve(*condense(jacobian.assemble(basis, prev=prev), -residual, D=dofs))
        u = u + du
    raise RuntimeError(f"reference Newton did not converge in {max_iter} iterations")


def assemble_load(mesh: MeshTri, f, facets_by_side: dict[int, np.ndarray], neumann: np.ndarray) -> np.ndarray:
    basis = Basis(mesh, ElementTriP1())
    load = LinearForm(lambda v, w: f(w.x[0], w.x[1]) * v).assemble(basis)
    for side, facet_ids in facets_by_side.items():
        if neumann[side] != 0.0 and facet_ids.size:
            fb = FacetBasis(mesh, ElementTriP1(), facets=facet_ids)
            load = load + LinearForm(lambda v, w, g=neumann[side]: g * v).assemble(fb)
    return load


def make_sample(family: str, amplitude: float, settings: dict, rng: np.random.Generator) -> Sample:
    """A deformed mesh with random boundary conditions and source, and its reference solution."""
    ref = reference_mesh(family, int(settings["refine"][family]))
    ends, side = side_tags(ref)
    ref_areas = signed_areas(ref.p, ref.t)
    for _ in range(100):
        points = warp(ref.p, amplitude, rng)
        if np.min(signed_areas(points, ref.t) / ref_areas) > 0.25:  # no triangle folds or collapses
            break
    else:
        raise RuntimeError(f"no fold-free warp of amplitude {amplitude} found")
    mesh = MeshTri(points, ref.t)
    dirichlet_sides = np.zeros(4, dtype=bool)
    while not dirichlet_sides.any():
        dirichlet_sides = rng.random(4) < 0.5
    neumann = np.where(dirichlet_sides, 0.0, rng.uniform(-1.0, 1.0, 4) * float(settings["neumann_scale"]))
    f = source_function(rng, int(settings["source_modes"]), float(settings["source_scale"]))
    # map boundary facets of the reference mesh to facet indices of the deformed one (same topology)
    facet_ids = ref.boundary_facets()
    by_side = {s: facet_ids[side == s] for s in range(4)}
    load = assemble_load(mesh, f, by_side, neumann)
    dirichlet = np.zeros(points.shape[1], dtype=bool)
    dirichlet[np.unique(ends[dirichlet_sides[side]])] = True
    u, iterations = solve_nonlinear(mesh, dirichlet, load, float(settings["beta"]))
    return Sample(
        nodes=points.T.copy(),
        cells=ref.t.T.copy(),
        facets=ends,
        facet_side=side,
        dirichlet=dirichlet,
        load=load,
        source=f(points[0], points[1]),
        u=u,
        dirichlet_sides=dirichlet_sides,
        neumann=neumann,
        family=family,
        amplitude=float(amplitude),
        newton_iterations=iterations,
    )
