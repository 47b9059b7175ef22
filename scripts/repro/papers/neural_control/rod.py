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
from functools import lru_cache

import numpy as np
from scipy.linalg import cho_factor, cho_solve

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

    @property
    def clamped(self) -> np.ndarray:
        return np.r_[0:4, 2 * self.nodes - 4 : 2 * self.nodes]

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
        x = np.empty(2 * self.nodes)
        x[self.free] = free
        x[self.clamped] = self.clamp_positions(z)
        return x

    def straight(self, z: np.ndarray) -> np.ndarray:
        """Free coordinates on the segment between the clamped nodes 1 and N-2 (a start for Newton)."""
        c = self.clamp_positions(z)
        t = np.linspace(0.0, 1.0, self.nodes - 2)[1:-1, None]
        return ((1 - t) * c[2:4] + t * c[4:6]).ravel()

    # ---- energy -------------------------------------------------------------------------------------
    def energy(self, x: np.ndarray) -> float:
        return float(self._terms(x, order=0)[0])

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return self._terms(x, order=1)[1]

    def hessian(self, x: np.ndarray) -> np.ndarray:
        return self._terms(x, order=2)[2]

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

    def _terms(self, x: np.ndarray, order: int) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        p = x.reshape(-1, 2)
        n, l0 = self.nodes, self.l0
        grad = np.zeros(2 * n) if order >= 1 else None
        hess = np.zeros((2 * n, 2 * n)) if order >= 2 else None
        # stretching, per edge (i, i+1)
        e = p[1:] - p[:-1]
        s = np.linalg.norm(e, axis=1)
        strain = s / l0 - 1.0
        energy = 0.5 * self.ea * l0 * np.sum(strain**2)
        if order >= 1:
            t = e / s[:, None]
            ge = (self.ea * strain)[:, None] * t
            _scatter_vector(grad, np.concatenate([-ge, ge], axis=1), _dofs(n - 1, 2))
        if order >= 2:
            eye = np.eye(2)[None]
            tt = t[:, :, None] * t[:, None, :]
            he = (self.ea / l0) * tt + (self.ea * strain / s)[:, None, None] * (eye - tt)
            _scatter_local(hess, _expand(he, _D_EDGE), _dofs(n - 1, 2))
        # bending, per interior node i with edges e1 = p_i - p_{i-1}, e2 = p_{i+1} - p_i
        e1, e2 = e[:-1], e[1:]
        phi = np.arctan2(_cross(e1, e2), np.sum(e1 * e2, axis=1))
        tan = np.tan(phi / 2)
        kappa = 2.0 * tan
        energy += 0.5 * self.ei / l0 * np.sum(kappa**2)
        if order >= 1:
            dk = 1.0 + tan**2  # d kappa / d phi
            fp = (self.ei / l0) * kappa * dk  # dE/dphi
            n1, n2 = np.sum(e1 * e1, 1), np.sum(e2 * e2, 1)
            g1, g2 = -_perp(e1) / n1[:, None], _perp(e2) / n2[:, None]  # dphi/de1, dphi/de2
            node_g = [-g1, g1 - g2, g2]  # dphi / d p_{i-1}, p_i, p_{i+1}
            _scatter_vector(grad, fp[:, None] * np.concatenate(node_g, axis=1), _dofs(n - 2, 3))
        if order >= 2:
            fpp = (self.ei / l0) * (dk**2 + kappa * dk * tan)  # d2E/dphi2 (kappa'' = dk * tan)
            h1, h2 = -_angle_hessian(e1), _angle_hessian(e2)  # d2phi/de1^2, d2phi/de2^2
            # d2phi / dp dp for nodes (a, b) in (i-1, i, i+1): through e1 = p_i - p_{i-1}, e2 = p_{i+1} - p_i
            gn = np.stack(node_g, axis=1).reshape(-1, 6)
            local = fpp[:, None, None] * gn[:, :, None] * gn[:, None, :]
            local += fp[:, None, None] * (_expand(h1, _D1) + _expand(h2, _D2))
            _scatter_local(hess, local, _dofs(n - 2, 3))
        return energy, grad, hess


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]


def _perp(a: np.ndarray) -> np.ndarray:
    """Rotation by +90 degrees: the gradient of the edge angle is perp(e) / |e|^2."""
    return np.stack([-a[:, 1], a[:, 0]], axis=1)


def _angle_hessian(e: np.ndarray) -> np.ndarray:
    """d2 atan2(e_y, e_x) / de^2 per row of e, (m, 2, 2)."""
    x, y = e[:, 0], e[:, 1]
    r4 = (x * x + y * y) ** 2
    hxx, hxy = 2 * x * y / r4, (y * y - x * x) / r4
    return np.stack([np.stack([hxx, hxy], 1), np.stack([hxy, -hxx], 1)], 1)


# How edge vectors depend on node positions: e1 = p_i - p_{i-1}, e2 = p_{i+1} - p_i (bending triple) and
# e = p_{i+1} - p_i (stretching pair).
_D1, _D2, _D_EDGE = np.array([-1.0, 1.0, 0.0]), np.array([0.0, -1.0, 1.0]), np.array([-1.0, 1.0])


def _expand(block: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(m, 2, 2) second derivative in one edge vector -> (m, 2w, 2w) in the w nodes it depends on."""
    m, w = len(block), len(d)
    return (np.multiply.outer(d, d)[None, :, None, :, None] * block[:, None, :, None, :]).reshape(m, 2 * w, 2 * w)


@lru_cache(maxsize=64)
def _dofs(count: int, width: int) -> np.ndarray:
    """Global coordinate indices (count, 2 * width) of ``width`` consecutive nodes starting at 0 .. count-1."""
    nodes = np.arange(count)[:, None] + np.arange(width)[None]
    return np.stack([2 * nodes, 2 * nodes + 1], axis=2).reshape(count, 2 * width)


def _scatter_vector(grad: np.ndarray, local: np.ndarray, dofs: np.ndarray) -> None:
    grad += np.bincount(dofs.ravel(), local.ravel(), minlength=grad.size)


def _scatter_local(hess: np.ndarray, local: np.ndarray, dofs: np.ndarray) -> None:
    flat = (dofs[:, :, None] * hess.shape[1] + dofs[:, None, :]).ravel()
    hess += np.bincount(flat, local.ravel(), minlength=hess.size).reshape(hess.shape)


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
    finite-difference checks).
    """
    free = rod.free
    xf = start.copy()
    x = rod.assemble(xf, z)
    energy = rod.energy(x)
    scale = rod.ea * rod.l0
    done_extra = 0
    for it in range(max_iter + 1):
        _, g, h = rod._terms(x, order=2)
        gf = g[free]
        res = float(np.max(np.abs(gf))) / scale
        if res <= tol:
            if done_extra >= extra:
                return Solve(xf, it, True, res)
            done_extra += 1
        if it == max_iter:
            break
        hf = h[free, free]
        step = _newton_step(hf, gf)
        t, slope = 1.0, float(gf @ step)
        while t > 1e-8:
            trial = rod.assemble(xf + t * step, z)
            e_trial = rod.energy(trial)
            if e_trial <= energy + 1e-4 * t * slope + 1e-12 * abs(energy):
                break
            t *= 0.5
        xf = xf + t * step
        x = rod.assemble(xf, z)
        energy = rod.energy(x)
    return Solve(xf, max_iter, False, res)


def _newton_step(hf: np.ndarray, gf: np.ndarray) -> np.ndarray:
    shift = 0.0
    scale = float(np.max(np.abs(np.diag(hf))))
    while True:
        try:
            factor = cho_factor(hf + shift * np.eye(len(hf)), check_finite=False)
            break
        except np.linalg.LinAlgError:
            shift = max(2 * shift, 1e-8 * scale)
    return cho_solve(factor, -gf, check_finite=False)


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
