"""The DEQ-style learned equilibrium model and control through it (the paper's slinky experiment, reconstructed).

The paper fits a deep-equilibrium model to measured slinky force-strain data and tracks targets through it with
the same adjoint machinery as for the simulator. Those data are not public, so the model here is fitted to
equilibria the rod simulator realises (the midpoint position under both clamps moved transversally, T1's
actuation) along random continuation paths. The model is an implicit layer

    h* = tanh(W h* + U s(z) + b),   y = C h* + d,   s(z) = (z - mu) / sigma,

with ||W||_F <= rho < 1 (kept by projection after each step), so the map is a contraction with a unique fixed
point. The fixed point is found by Newton on G(h) = h - f(h, z) (warm-started along a continuation), never
unrolled: training gradients and control sensitivities both come from the implicit-function theorem,
G_h^T p = dL/dh, dL/dtheta = p^T df/dtheta, dL/dz = p^T df/dz. ``DEQTask`` exposes the rollout / adjoint
interface of ``tasks.Task``, so Adjoint+RHC, SPSA and CEM run on the learned model unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.papers.neural_control.controller import Adam
from repro.papers.neural_control.tasks import Actuated, Rollout

PARAMS = ("W", "U", "b", "C", "d")


@dataclass
class DEQ:
    """Parameters of the implicit layer and the input standardisation."""

    W: np.ndarray  # (m, m)
    U: np.ndarray  # (m, p)
    b: np.ndarray  # (m,)
    C: np.ndarray  # (q, m)
    d: np.ndarray  # (q,)
    mu: np.ndarray  # (p,)
    sigma: np.ndarray  # (p,)
    rho: float = 0.9

    @classmethod
    def init(cls, width: int, z: np.ndarray, y: np.ndarray, rng: np.random.Generator, rho: float) -> DEQ:
        p, q = z.shape[1], y.shape[1]
        sigma = z.std(0)
        return cls(
            rng.normal(0, 0.3 / np.sqrt(width), (width, width)),
            rng.normal(0, 1.0 / np.sqrt(p), (width, p)),
            np.zeros(width),
            rng.normal(0, 0.1, (q, width)),
            y.mean(0),
            z.mean(0),
            np.where(sigma > 0, sigma, 1.0),
            rho,
        )

    def flat(self) -> np.ndarray:
        return np.concatenate([getattr(self, k).ravel() for k in PARAMS])

    def set_flat(self, theta: np.ndarray) -> None:
        i = 0
        for k in PARAMS:
            a = getattr(self, k)
            setattr(self, k, theta[i : i + a.size].reshape(a.shape).copy())
            i += a.size
        norm = np.linalg.norm(self.W)
        if norm > self.rho:
            self.W *= self.rho / norm

    def solve(self, z: np.ndarray, h0: np.ndarray | None = None, tol: float = 1e-12, max_iter: int = 50):
        """Fixed points h* (B, m) for controls z (B, p) by Newton on h - f(h, z); also the iteration count."""
        s = (z - self.mu) / self.sigma
        drive = s @ self.U.T + self.b
        h = np.zeros((len(z), len(self.b))) if h0 is None else h0.copy()
        eye = np.eye(len(self.b))
        for it in range(1, max_iter + 1):
            f = np.tanh(h @ self.W.T + drive)
            g = h - f
            if np.max(np.abs(g)) < tol:
                return h, it - 1
            jac = eye - (1 - f**2)[:, :, None] * self.W[None]
            h = h - np.linalg.solve(jac, g[..., None])[..., 0]
        return np.tanh(h @ self.W.T + drive), max_iter

    def output(self, h: np.ndarray) -> np.ndarray:
        return h @ self.C.T + self.d

    def adjoint(self, h: np.ndarray, grad_h: np.ndarray) -> np.ndarray:
        """p solving (I - df/dh)^T p = dL/dh at the fixed points, times tanh' (the cotangent of the pre-activation)."""
        slope = 1 - h**2
        jac_t = np.eye(len(self.b))[None] - (slope[:, :, None] * self.W[None]).transpose(0, 2, 1)
        p = np.linalg.solve(jac_t, grad_h[..., None])[..., 0]
        return p * slope

    def fit_loss_and_gradient(self, z: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Mean 1/2 ||y(z) - y||^2, its gradient in the flat parameters (implicit-function theorem), fixed points."""
        h, _ = self.solve(z)
        resid = self.output(h) - y
        n = len(z)
        g = self.adjoint(h, resid @ self.C)
        s = (z - self.mu) / self.sigma
        grads = {"W": g.T @ h / n, "U": g.T @ s / n, "b": g.mean(0), "C": resid.T @ h / n, "d": resid.mean(0)}
        loss = 0.5 * float(np.mean(np.sum(resid**2, axis=1)))
        return loss, np.concatenate([grads[k].ravel() for k in PARAMS]), h

    def grad_z(self, h: np.ndarray, grad_y: np.ndarray) -> np.ndarray:
        """dL/dz for a cotangent on the outputs at the fixed points h (B, m)."""
        return (self.adjoint(h, grad_y @ self.C) @ self.U) / self.sigma


def fit(model: DEQ, z: np.ndarray, y: np.ndarray, steps: int, lr: float) -> list[float]:
    """Full-batch Adam on the fitting loss with implicit gradients; returns the loss history."""
    adam = Adam(model.flat().size, lr)
    history = []
    for _ in range(steps):
        loss, grad, _ = model.fit_loss_and_gradient(z, y)
        history.append(loss)
        model.set_flat(adam.step(model.flat(), grad))
    return history


@dataclass
class DEQTask(Actuated):
    """Midpoint tracking through the learned model: loss sum_k 1/2 ||y_k - y*_k||^2 / K (the T2 form)."""

    model: DEQ
    x0: np.ndarray  # fixed point at the start control
    z0: np.ndarray
    steps: int
    bound: float
    target: np.ndarray  # (steps, q)
    name: str = "t1"  # whose actuation the controls use

    def _step(self, k: int, h: np.ndarray) -> tuple[float, np.ndarray]:
        d = self.model.output(h[None])[0] - self.target[k - 1]
        return 0.5 * float(d @ d) / self.steps, d / self.steps

    def rollout(self, u: np.ndarray, x_start: np.ndarray, z_start: np.ndarray, first: int = 0) -> Rollout:
        h, z = x_start, z_start
        hs, zs, loss, newton = [], [], 0.0, 0
        for j, uj in enumerate(u):
            z = z + self.actuation @ uj
            hb, it = self.model.solve(z[None], h[None])
            h, newton = hb[0], newton + it
            hs.append(h)
            zs.append(z)
            loss += self._step(first + j + 1, h)[0]
        return Rollout(hs, zs, loss, len(u), newton, 0)

    def adjoint_gradient(self, run: Rollout, first: int = 0) -> np.ndarray:
        """dLoss/du_j = A^T sum_{k>=j} dL/dz_k, each dL/dz_k from one adjoint solve at the realised fixed point."""
        h = np.stack(run.free)
        grad_y = np.stack([self._step(first + j + 1, hj)[1] for j, hj in enumerate(run.free)])
        dz = self.model.grad_z(h, grad_y)
        return np.cumsum(dz[::-1], axis=0)[::-1] @ self.actuation

    def trajectory_loss(self, free: list[np.ndarray], z: list[np.ndarray]) -> float:
        return float(np.sum([self._step(k + 1, h)[0] for k, h in enumerate(free)]))
