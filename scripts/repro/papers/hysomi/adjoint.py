"""The RK4 solve of :mod:`repro.papers.hysomi.soil_model` in numpy, with its discrete adjoint as one autograd node.

Why: training differentiates through hundreds of RK4 stages on small tensors (members x samples x 5 pools),
and autograd's cost there is its per-operation overhead (recording a node per tensor operation, then
replaying them), not arithmetic. Here the forward solve runs in numpy and the backward pass is the discrete
adjoint: reverse-mode differentiation of the RK4 steps themselves, written out by hand. It is the exact
gradient of the discrete solve (what autograd through :func:`soil_model.simulate` computes, to round-off),
not the continuous adjoint ODE, whose gradient would differ from the solve's by the discretisation error.
:class:`RK4Solve` wraps both as one ``torch.autograd.Function``, so autograd records one node per solve.

Layouts: states are (5, B) and the rate vector (6, B), pool or process first, so that every pool and
parameter is a contiguous row and the two Michaelis-Menten rates (depolymerisation, uptake) share their
operations as one (2, B) block. The substeps follow :func:`soil_model.simulate`'s rule, computed by the
same function (:func:`soil_model.fastest_rate`, on views of the arrays).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from repro.papers.hysomi.soil_model import MAX_SUBSTEPS, fastest_rate, observation_steps, stoichiometry

# theta's rows (PARAMS order: V_d, K_d, V_u, K_u, CUE, r_d, r_ep, r_el) reordered so that every block the
# rates use is a slice: maximum rates (V_d, V_u), half-saturations (K_d, K_u), MBC turnover (r_d, r_ep), CUE, r_el.
_ORDER = [0, 2, 1, 3, 5, 6, 4, 7]


class _Rates:
    """Parameters of one solve in the (rows, B) layout, the right-hand side and its vector-Jacobian product."""

    def __init__(self, theta: np.ndarray, f_s: float):
        p = np.ascontiguousarray(theta[_ORDER])
        self.vmax, self.half_sat, self.turnover, self.cue, self.enz_loss = p[0:2], p[2:4], p[4:6], p[6], p[7]
        self.matrix = stoichiometry(f_s).numpy()  # (6, 5): rates -> derivatives
        self.matrix_t = np.ascontiguousarray(self.matrix.T)
        # (B, 8) view for soil_model.fastest_rate: one definition of the substep rule for both solvers
        self.theta_by_sample = torch.from_numpy(theta).T

    def rates(self, y: np.ndarray) -> np.ndarray:
        """The six process rates (6, B) at states ``y`` (5, B), in :func:`soil_model.stoichiometry`'s order."""
        r = np.empty((6, y.shape[1]))
        substrate = y[0:2]  # SOC, DOC
        np.multiply(self.vmax, y[3:1:-1], out=r[0:2])  # V_d ENZ, V_u MBC
        r[0:2] *= substrate
        r[0:2] /= self.half_sat + substrate  # depolymerisation, uptake
        np.multiply(self.cue, r[1], out=r[2])
        np.subtract(r[1], r[2], out=r[2])  # respired uptake = uptake - growth
        np.multiply(self.cue, r[1], out=r[1])  # growth
        np.multiply(self.turnover, y[2], out=r[3:5])  # death, enzyme production
        np.multiply(self.enz_loss, y[3], out=r[5])
        return r

    def __call__(self, y: np.ndarray) -> np.ndarray:
        """dx/dt (5, B) at states ``y`` (5, B)."""
        return self.matrix_t @ self.rates(y)

    def vjp(self, y: np.ndarray, g: np.ndarray, acc: np.ndarray) -> np.ndarray:
        """``g^T d(dx/dt)/dy`` (5, B) at ``y`` for a cotangent ``g`` (5, B); adds ``g^T d(dx/dt)/dtheta`` to ``acc``.

        ``acc`` (8, B) is in ``_ORDER`` with the half-saturation rows negated (see :meth:`theta_grad`): one
        product per row into one buffer and one sum, the fewest numpy calls per stage.
        """
        gr = self.matrix @ g  # (6, B) cotangent of the rates
        substrate, catalyst = y[0:2], y[3:1:-1]  # (SOC, DOC), (ENZ, MBC)
        denom = self.half_sat + substrate
        vmax_cat = self.vmax * catalyst
        mm = vmax_cat * substrate
        mm /= denom  # Michaelis-Menten rates: depolymerisation, uptake U
        # U enters growth (CUE U) and respiration (U - CUE U).
        g_cue = gr[1] - gr[2]
        w = np.empty_like(mm)
        w[0] = gr[0]
        np.multiply(self.cue, g_cue, out=w[1])
        w[1] += gr[2]
        w /= denom  # the Michaelis-Menten rates' cotangents over their denominators
        w_sub = w * substrate
        buf = np.empty_like(acc)
        np.multiply(w_sub, catalyst, out=buf[0:2])
        np.multiply(w, mm, out=buf[2:4])
        np.multiply(gr[3:5], y[2], out=buf[4:6])
        np.multiply(mm[1], g_cue, out=buf[6])
        np.multiply(gr[5], y[3], out=buf[7])
        acc += buf
        gy = np.empty_like(y)
        np.multiply(w, vmax_cat, out=gy[0:2])
        gy[0:2] *= self.half_sat
        gy[0:2] /= denom
        np.multiply(w_sub, self.vmax, out=gy[3:1:-1])
        turnover = self.turnover * gr[3:5]
        gy[2] += turnover[0]
        gy[2] += turnover[1]
        gy[3] += self.enz_loss * gr[5]
        gy[4] = 0.0
        return gy

    @staticmethod
    def theta_grad(acc: np.ndarray) -> np.ndarray:
        """The sum of :meth:`vjp`'s ``acc`` as the gradient (8, B) in PARAMS order."""
        acc[2:4] *= -1.0
        grad = np.empty_like(acc)
        grad[_ORDER] = acc
        return grad


Stages = list[list[tuple[float, list[np.ndarray]]]]


def _solve(x0: np.ndarray, f: _Rates, steps: list[int], dt: float, keep_stages: bool) -> tuple[np.ndarray, Stages]:
    """States at ``steps`` (T, 5, B) and, if ``keep_stages``, per step of ``dt`` its substeps' (h, stage inputs)."""
    keep = set(steps)
    out: dict[int, np.ndarray] = {}
    stages: Stages = []
    x = x0
    last = max(steps)
    for k in range(last + 1):
        if k in keep:
            out[k] = x
        if k == last:
            break
        n_sub = max(1, math.ceil(dt * fastest_rate(torch.from_numpy(x).T, f.theta_by_sample)))
        if n_sub > MAX_SUBSTEPS:
            raise FloatingPointError(f"soil model too stiff at t = {k * dt} d ({n_sub} substeps needed)")
        h = dt / n_sub
        substeps = []
        for _ in range(n_sub):
            k1 = f(x)
            y2 = x + 0.5 * h * k1
            k2 = f(y2)
            y3 = x + 0.5 * h * k2
            k3 = f(y3)
            y4 = x + h * k3
            k4 = f(y4)
            substeps.append((h, [x, y2, y3, y4]))
            x = x + h / 6.0 * ((k1 + 2.0 * k2) + (k4 + 2.0 * k3))
        if keep_stages:
            stages.append(substeps)
    return np.stack([out[k] for k in steps]), stages


def _adjoint(grad_out: np.ndarray, f: _Rates, steps: list[int], stages: Stages) -> tuple[np.ndarray, np.ndarray]:
    """Gradients (5, B) and (8, B) wrt x0 and theta of ``sum(grad_out * states at steps)``, RK4 step by step in reverse.

    For x' = x + h/6 (k1 + 2 k2 + 2 k3 + k4) with k_i = f(y_i), y2 = x + h/2 k1, y3 = x + h/2 k2, y4 = x + h k3,
    the cotangent a of x' gives k4 the cotangent h/6 a, k3 h/3 a + h b4, k2 h/3 a + h/2 b3, k1 h/6 a + h/2 b2
    (b_i the cotangent of y_i, pulled back through f), and x the cotangent a + b1 + b2 + b3 + b4.
    """
    at_step: dict[int, np.ndarray] = {}
    for i, k in enumerate(steps):
        at_step[k] = at_step[k] + grad_out[i] if k in at_step else grad_out[i]
    a = np.zeros_like(grad_out[0])
    acc = np.zeros((8, a.shape[1]))
    for k in range(max(steps), -1, -1):
        if k in at_step:
            a = a + at_step[k]
        if k == 0:
            break
        for h, (y1, y2, y3, y4) in reversed(stages[k - 1]):
            b4 = f.vjp(y4, h / 6.0 * a, acc)
            b3 = f.vjp(y3, h / 3.0 * a + h * b4, acc)
            b2 = f.vjp(y2, h / 3.0 * a + 0.5 * h * b3, acc)
            b1 = f.vjp(y1, h / 6.0 * a + 0.5 * h * b2, acc)
            a = a + ((b1 + b2) + (b3 + b4))
    return a, f.theta_grad(acc)


class RK4Solve(torch.autograd.Function):
    """States (T, 5, B) at observation ``steps`` from x0 (5, B) and theta (8, B); backward by the discrete adjoint."""

    @staticmethod
    def forward(ctx, x0: torch.Tensor, theta: torch.Tensor, steps: list[int], dt: float, f_s: float) -> torch.Tensor:
        f = _Rates(theta.detach().numpy(), f_s)
        states, stages = _solve(x0.detach().numpy(), f, steps, dt, keep_stages=any(ctx.needs_input_grad[:2]))
        ctx.solve = (f, steps, stages)
        return torch.from_numpy(states)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        f, steps, stages = ctx.solve
        g_x0, g_theta = _adjoint(grad.contiguous().numpy(), f, steps, stages)
        return torch.from_numpy(g_x0), torch.from_numpy(g_theta), None, None, None


def simulate(x0: torch.Tensor, theta: torch.Tensor, times: list[float], dt: float, f_s: float) -> torch.Tensor:
    """:func:`soil_model.simulate` (same arguments, same result to round-off), differentiable through one node.

    ``x0`` (..., 5) and ``theta`` (..., 8) broadcast over their leading dimensions; float64 on the CPU.
    """
    batch = torch.broadcast_shapes(x0.shape[:-1], theta.shape[:-1])
    x0 = x0.expand(*batch, x0.shape[-1]).reshape(-1, x0.shape[-1]).T.contiguous()
    theta = theta.expand(*batch, theta.shape[-1]).reshape(-1, theta.shape[-1]).T.contiguous()
    states = RK4Solve.apply(x0, theta, observation_steps(times, dt), dt, f_s)  # (T, 5, B)
    return states.permute(2, 0, 1).reshape(*batch, *states.shape[:2])
