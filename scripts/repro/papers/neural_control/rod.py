"""A planar discrete elastic rod with clamped ends, its equilibria (Newton) and their sensitivities (adjoint).

The official simulator (C++ discrete elastic rods with MKL/Pardiso) is not pip-installable, so this is a
small planar re-implementation of the same energy: stretching ½ EA l0 (|e|/l0 - 1)^2 per edge and bending
½ EI kappa^2 / l0 per interior node with the discrete curvature kappa = 2 tan(phi/2) of the turning angle
phi. Each end is clamped: the control z = (xL, yL, thetaL, xR, yR, thetaR) fixes the two end nodes of
each side (position and tangent). Gradient and Hessian are analytic, so one equilibrium solve costs well
under a millisecond and the adjoint is exact up to the solver tolerance.

Sensitivity of the equilibrium x*(z) (G(x, z) = dE/dx_free = 0): G_x S = -G_z. The adjoint product
S^T v = -G_z^T p with G_x^T p = v is one linear solve with the Hessian already at hand; nothing of the
Newton iterations is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from scipy.linalg import get_lapack_funcs

CLAMPED = 4  # two nodes per end


@dataclass(frozen=True)
class Rod:
    """Geometry and stiffness of a rod of ``nodes`` nodes and rest length ``length``."""

    nodes: int
    length: float = 1.0
    ea: float = 1.0e4
    ei: float = 1.0

    def __post_init__(self) -> None:
        if self.nodes < CLAMPED + 1:
            raise ValueError(f"a clamped-clamped rod needs at least {CLAMPED + 1} nodes, got {self.nodes}")

    @property
    def l0(self) -> float:
        return self.length / (self.nodes - 1)

    @property
    def free(self) -> slice:
        """The free coordinates (nodes 2 .. N-3) in the flattened 2N vector."""
        return slice(4, 2 * self.nodes - 4)

    @cached_property
    def clamped(self) -> np.ndarray:
        """Indices of the clamped coordinates, built once per rod (every adjoint step indexes with it)."""
        index = np.r_[0:4, 2 * self.nodes - 4 : 2 * self.nodes]
        index.flags.writeable = False
        return index

    # ---- clamps -------------------------------------------------------------------------------------
    def clamp_positions(self, z: np.ndarray) -> np.ndarray:
        """Flattened coordinates of nodes 0, 1, N-2, N-1 fixed by the control z (8,)."""
        xl, yl, tl, xr, yr, tr = z
        l0 = self.l0
        return np.array(
            [xl, yl, xl + l0 * np.cos(tl), yl + l0 * np.sin(tl), xr - l0 * np.cos(tr), yr - l0 * np.sin(tr), xr, yr]
        )

    def clamp_jacobian(self, z: np.ndarray) -> np.ndarray:
        """d(clamped coordinates)/dz, (8, 6)."""
        tl, tr = z[2], z[5]
        l0 = self.l0
        c = np.zeros((8, 6))
        c[0, 0] = c[1, 1] = c[2, 0] = c[3, 1] = 1.0
        c[2, 2], c[3, 2] = -l0 * np.sin(tl), l0 * np.cos(tl)
        c[4, 3] = c[5, 4] = c[6, 3] = c[7, 4] = 1.0
        c[4, 5], c[5, 5] = l0 * np.sin(tr), -l0 * np.cos(tr)
        return c

    def assemble(self, free: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Full flattened coordinates (2N,) from the free ones and the control."""
        return self._place(free, self.clamp_positions(z))

    def _place(self, free: np.ndarray, clamps: np.ndarray) -> np.ndarray:
        """Full coordinates from the free ones and the clamped ones (a solve computes these once per z)."""
        x = np.empty(2 * self.nodes)
        x[:CLAMPED] = clamps[:CLAMPED]
        x[self.free] = free
        x[-CLAMPED:] = clamps[CLAMPED:]
        return x

    def straight(self, z: np.ndarray) -> np.ndarray:
        """Free coordinates on the segment between the clamped nodes 1 and N-2 (a start for Newton)."""
        c = self.clamp_positions(z)
        t = np.linspace(0.0, 1.0, self.nodes - 2)[1:-1, None]
        return ((1 - t) * c[2:4] + t * c[4:6]).ravel()

    # ---- energy -------------------------------------------------------------------------------------
    def energy(self, x: np.ndarray) -> float:
        return _Terms(self, x).energy

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return _Terms(self, x).gradient()

    def hessian(self, x: np.ndarray) -> np.ndarray:
        return _Terms(self, x).hessian()

    def curvature(self, x: np.ndarray) -> np.ndarray:
        """Discrete curvature 2 tan(phi/2) / l0 at the N-2 interior nodes (1/length)."""
        p = x.reshape(-1, 2)
        e1, e2 = p[1:-1] - p[:-2], p[2:] - p[1:-1]
        phi = np.arctan2(_cross(e1, e2), np.sum(e1 * e2, axis=1))
        return 2.0 * np.tan(phi / 2) / self.l0

    def curvature_jacobian(self, x: np.ndarray) -> np.ndarray:
        """d curvature / d x, (N-2, 2N)."""
        p = x.reshape(-1, 2)
        e1, e2 = p[1:-1] - p[:-2], p[2:] - p[1:-1]
        phi = np.arctan2(_cross(e1, e2), np.sum(e1 * e2, axis=1))
        dk = (1.0 + np.tan(phi / 2) ** 2) / self.l0
        g1, g2 = -_perp(e1) / np.sum(e1 * e1, 1)[:, None], _perp(e2) / np.sum(e2 * e2, 1)[:, None]
        jac = np.zeros((self.nodes - 2, 2 * self.nodes))
        rows = np.arange(self.nodes - 2)
        for k, block in enumerate((-g1, g1 - g2, g2)):  # d phi / d node (i-1, i, i+1)
            for d in range(2):
                jac[rows, 2 * (rows + k) + d] = dk * block[:, d]
        return jac


class _Terms:
    """Energy of one configuration x (2N,), with its gradient and Hessian computed on demand.

    Newton needs the energy at every line-search trial but derivatives only at the accepted point, and
    the Hessian only while it has not converged; keeping the shared quantities (edges, strains, turning
    angles) here lets each be computed once. Every expression keeps the operands and the order of the
    per-element formulas, the expansions from edges to nodes are exact (_pair_matrix) and the scatters
    sum in the same order, so the results are the same floats as evaluating each term from scratch.
    """

    __slots__ = ("rod", "ex", "ey", "e", "sq", "s", "strain", "tan", "kappa", "energy", "_grad", "_parts")

    def __init__(self, rod: Rod, x: np.ndarray) -> None:
        self.rod = rod
        l0 = rod.l0
        p = x.reshape(-1, 2)
        # stretching, per edge (i, i+1)
        self.e = e = p[1:] - p[:-1]
        self.ex, self.ey = ex, ey = e[:, 0], e[:, 1]
        self.sq = sq = ex * ex + ey * ey  # |e|^2 as np.linalg.norm sums it
        self.s = s = np.sqrt(sq)
        self.strain = strain = s / l0 - 1.0
        energy = 0.5 * rod.ea * l0 * (strain**2).sum()  # ndarray.sum: np.sum's reduction, without its dispatch
        # bending, per interior node i with edges e1 = p_i - p_{i-1}, e2 = p_{i+1} - p_i
        cross = ex[:-1] * ey[1:] - ey[:-1] * ex[1:]
        phi = np.arctan2(cross, ex[:-1] * ex[1:] + ey[:-1] * ey[1:])
        self.tan = tan = np.tan(phi / 2)
        self.kappa = kappa = 2.0 * tan
        energy += 0.5 * rod.ei / l0 * (kappa**2).sum()
        self.energy = float(energy)
        self._grad: np.ndarray | None = None
        self._parts: tuple[np.ndarray, ...] = ()

    def gradient(self) -> np.ndarray:
        """dE/dx (2N,); keeps what the Hessian shares with it."""
        if self._grad is not None:
            return self._grad
        rod, layout = self.rod, _layout(self.rod.nodes)
        l0 = rod.l0
        ea_strain = rod.ea * self.strain
        t = self.e / self.s[:, None]
        ge = ea_strain[:, None] * t
        grad = np.bincount(layout.edge, (_EDGE_SIGNS * ge[:, None, :]).ravel(), minlength=2 * rod.nodes)
        dk = 1.0 + self.tan**2  # d kappa / d phi
        fp = (rod.ei / l0) * self.kappa * dk  # dE/dphi
        # d phi / d p_{i-1}, p_i, p_{i+1}: perp(e1) / |e1|^2, -that - perp(e2) / |e2|^2, perp(e2) / |e2|^2
        perp = np.empty_like(self.e)
        np.negative(self.ey, out=perp[:, 0])
        perp[:, 1] = self.ex
        q = perp / self.sq[:, None]
        gn = np.empty((rod.nodes - 2, 6))
        gn[:, :2] = q[:-1]
        np.subtract(-q[:-1], q[1:], out=gn[:, 2:4])
        gn[:, 4:] = q[1:]
        grad += np.bincount(layout.bend, (fp[:, None] * gn).ravel(), minlength=2 * rod.nodes)
        self._grad, self._parts = grad, (ea_strain, t, dk, fp, gn)
        return grad

    def hessian(self) -> np.ndarray:
        """d2E/dx2 (2N, 2N)."""
        rod, layout = self.rod, _layout(self.rod.nodes)
        l0, size = rod.l0, (2 * rod.nodes) ** 2
        self.gradient()
        ea_strain, t, dk, fp, gn = self._parts
        tt = t[:, :, None] * t[:, None, :]
        he = (rod.ea / l0) * tt + (ea_strain / self.s)[:, None, None] * (_EYE - tt)
        hess = np.bincount(layout.edge_pairs, (he.reshape(-1, 4) @ _EDGE_PAIRS).ravel(), minlength=size)
        fpp = (rod.ei / l0) * (dk**2 + self.kappa * dk * self.tan)  # d2E/dphi2 (kappa'' = dk * tan)
        # per interior node the angle Hessians of e1 and e2 side by side, (N-2, 8); _BEND_PAIRS turns them
        # into d2phi / dp dp for nodes (a, b) in (i-1, i, i+1), with d2phi/de1^2 = -(that of e1)
        angle = _angle_hessian(self.ex, self.ey, self.sq).reshape(-1, 4)
        both = np.concatenate((angle[:-1], angle[1:]), axis=1) @ _BEND_PAIRS
        local = ((fpp[:, None] * gn)[:, :, None] * gn[:, None, :]).reshape(len(gn), -1)
        local += fp[:, None] * both
        hess += np.bincount(layout.bend_pairs, local.ravel(), minlength=size)
        return hess.reshape(2 * rod.nodes, 2 * rod.nodes)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]


def _perp(a: np.ndarray) -> np.ndarray:
    """Rotation by +90 degrees: the gradient of the edge angle is perp(e) / |e|^2."""
    return np.stack([-a[:, 1], a[:, 0]], axis=1)


def _angle_hessian(x: np.ndarray, y: np.ndarray, r2: np.ndarray) -> np.ndarray:
    """d2 atan2(e_y, e_x) / de^2 per edge e = (x, y) with r2 = x * x + y * y, (m, 2, 2)."""
    r4 = r2**2
    hxx = 2 * x * y / r4
    out = np.empty((len(x), 2, 2))
    out[:, 0, 0] = hxx
    np.divide(y * y - x * x, r4, out=out[:, 0, 1])
    out[:, 1, 0] = out[:, 0, 1]
    np.negative(hxx, out=out[:, 1, 1])
    return out


def _pair_matrix(*patterns: np.ndarray) -> np.ndarray:
    """(4k, (2w)^2): from k second derivatives in edge vectors, (2, 2) each, flattened side by side, to the
    (w, 2, w, 2) second derivative in the w nodes they depend on, sum_k pattern_k[a, b] h_k[i, j] (flattened).

    The patterns hold 1, -1 and 0, so every product is exact and each entry (one or two nonzero terms) is
    rounded once, as the sum of the expanded blocks is.
    """
    w = len(patterns[0])
    out = np.zeros((len(patterns), 2, 2, w, 2, w, 2))
    for k, pattern in enumerate(patterns):
        for i in range(2):
            for j in range(2):
                out[k, i, j, :, i, :, j] = pattern
    return out.reshape(4 * len(patterns), 4 * w * w)


# How edge vectors depend on node positions: e1 = p_i - p_{i-1}, e2 = p_{i+1} - p_i (bending triple) and
# e = p_{i+1} - p_i (stretching pair). _EDGE_SIGNS does for a first derivative (m, 2) of the stretching
# pair what _EDGE_PAIRS does for its second derivative.
_D1, _D2, _D_EDGE = np.array([-1.0, 1.0, 0.0]), np.array([0.0, -1.0, 1.0]), np.array([-1.0, 1.0])
_BEND_PAIRS = _pair_matrix(-np.multiply.outer(_D1, _D1), np.multiply.outer(_D2, _D2))
_EDGE_PAIRS = _pair_matrix(np.multiply.outer(_D_EDGE, _D_EDGE))
_EDGE_SIGNS = _D_EDGE[:, None]
_EYE = np.eye(2)[None]


@lru_cache(maxsize=64)
def _dofs(count: int, width: int) -> np.ndarray:
    """Global coordinate indices (count, 2 * width) of ``width`` consecutive nodes starting at 0 .. count-1."""
    nodes = np.arange(count)[:, None] + np.arange(width)[None]
    return np.stack([2 * nodes, 2 * nodes + 1], axis=2).reshape(count, 2 * width)


@dataclass(frozen=True)
class _Layout:
    """Where each local term lands: flat gradient indices of the stretching pairs and bending triples and
    flat (row-major) Hessian indices of their coordinate pairs, in the order the local arrays ravel."""

    edge: np.ndarray
    bend: np.ndarray
    edge_pairs: np.ndarray
    bend_pairs: np.ndarray


@lru_cache(maxsize=64)
def _layout(nodes: int) -> _Layout:
    """The scatter indices of a rod of ``nodes`` nodes, built once instead of at every evaluation."""
    edge, bend = _dofs(nodes - 1, 2), _dofs(nodes - 2, 3)

    def pairs(dofs: np.ndarray) -> np.ndarray:
        return (dofs[:, :, None] * (2 * nodes) + dofs[:, None, :]).ravel()

    return _Layout(edge.ravel(), bend.ravel(), pairs(edge), pairs(bend))


@lru_cache(maxsize=64)
def _identity(size: int) -> np.ndarray:
    """A read-only identity of ``size``, built once (every Newton step forms hf + shift * I)."""
    eye = np.eye(size)
    eye.flags.writeable = False
    return eye


# The LAPACK routines scipy's cho_factor / cho_solve call, taken once: their per-call checks and batching
# wrapper cost more than the factorisation of a 34 x 34 Hessian.
_POTRF, _POTRS = get_lapack_funcs(("potrf", "potrs"), (np.zeros((1, 1)),))


@dataclass
class Solve:
    """One equilibrium solve: free coordinates, Newton iterations, convergence and the final gradient norm."""

    free: np.ndarray
    iterations: int
    converged: bool
    residual: float


def equilibrium(
    rod: Rod, z: np.ndarray, start: np.ndarray, *, tol: float = 1e-9, max_iter: int = 60, extra: int = 0
) -> Solve:
    """Newton with a backtracking line search on the energy, warm-started at ``start``.

    Near a bifurcation the free-free Hessian stops being positive definite; it is then shifted by a
    multiple of the identity until a Cholesky factorisation exists (a regularised Hessian, as in the
    paper's simulator). ``extra`` Newton steps after convergence push the residual to round-off (for
    finite-difference checks). The clamps are placed once per solve, the accepted line-search trial is
    the next iterate (its energy is not recomputed) and the Hessian is built only when a step follows.
    """
    free = rod.free
    clamps = rod.clamp_positions(z)
    xf = start.copy()
    terms = _Terms(rod, rod._place(xf, clamps))
    scale = rod.ea * rod.l0
    done_extra = 0
    for it in range(max_iter + 1):
        gf = terms.gradient()[free]
        res = float(np.abs(gf).max()) / scale
        if res <= tol:
            if done_extra >= extra:
                return Solve(xf, it, True, res)
            done_extra += 1
        if it == max_iter:
            break
        step = _newton_step(terms.hessian()[free, free], gf)
        energy = terms.energy
        t, slope = 1.0, float(gf @ step)
        while t > 1e-8:
            moved = xf + t * step
            trial = _Terms(rod, rod._place(moved, clamps))
            if trial.energy <= energy + 1e-4 * t * slope + 1e-12 * abs(energy):
                xf, terms = moved, trial
                break
            t *= 0.5
        else:
            xf = xf + t * step
            terms = _Terms(rod, rod._place(xf, clamps))
    return Solve(xf, max_iter, False, res)


def _newton_step(hf: np.ndarray, gf: np.ndarray) -> np.ndarray:
    """Cholesky solve of the (shifted) Hessian by LAPACK potrf/potrs, as scipy's cho_factor/cho_solve do."""
    shift, scale = 0.0, None
    while True:
        factor, info = _POTRF(hf + shift * _identity(len(hf)), lower=False, overwrite_a=True, clean=False)
        if info == 0:
            break
        if info < 0:
            raise ValueError(f"illegal value in argument {-info} of LAPACK potrf")
        if scale is None:
            scale = float(np.max(np.abs(np.diag(hf))))
        shift = max(2 * shift, 1e-8 * scale)
    step, info = _POTRS(factor, -gf, lower=False)
    if info != 0:
        raise ValueError(f"illegal value in argument {-info} of LAPACK potrs")
    return step


def adjoint_vjp(rod: Rod, xf: np.ndarray, z: np.ndarray, v_free: np.ndarray, v_clamped: np.ndarray | None = None):
    """d(v . x*(z))/dz for a cotangent v on the free (and optionally the clamped) coordinates.

    One adjoint solve H_ff p = v_free, then S^T v = -G_z^T p with G_z = H_fc dxc/dz; a cotangent on the
    clamped coordinates adds its direct term dxc/dz^T v_clamped.
    """
    h = rod.hessian(rod.assemble(xf, z))
    free, clamped = rod.free, rod.clamped
    jac = rod.clamp_jacobian(z)
    p = np.linalg.solve(h[free, free], v_free)
    out = -jac.T @ (h[clamped, free] @ p)
    if v_clamped is not None:
        out = out + jac.T @ v_clamped
    return out
