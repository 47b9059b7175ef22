"""The three control tasks (T1 node targeting, T2 midpoint tracking, T3 multistable shape formation) as
continuation problems on the rod, and the rollout that every method shares.

A task fixes which clamp coordinates are actuated (``actuation``: z rates = actuation @ u), the per-step
bound on |u|, the number of continuation steps and its loss. A rollout applies control increments
dz_k = actuation @ u_k, k = 1..K, and solves each equilibrium warm-started from the previous one, so the
branch a multistable rod ends on depends on the path (history dependence).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from repro.papers.neural_control.rod import Rod, adjoint_vjp, equilibrium

# Clamp coordinates z = (xL, yL, thetaL, xR, yR, thetaR) each task actuates.
ACTUATED = {
    "t1": (1, 4),  # both clamped ends, transversally
    "t2": (0, 1, 3, 4),  # both ends in the plane
    "t3": (3, 4, 5),  # one end: x, y and in-plane rotation
}
KINDS = {"t1": "node", "t2": "tracking", "t3": "shape"}


def actuation(task: str) -> np.ndarray:
    cols = ACTUATED[task]
    a = np.zeros((6, len(cols)))
    a[list(cols), np.arange(len(cols))] = 1.0
    return a


class Actuated:
    """Which clamp coordinates a task's controls move, from its ``name`` (shared by the rod and the learned model)."""

    name: str

    @property
    def actuation(self) -> np.ndarray:
        return actuation(self.name)

    @property
    def inputs(self) -> int:
        return self.actuation.shape[1]


@dataclass
class Task(Actuated):
    """One case of a task: its start equilibrium, target and loss."""

    name: str
    rod: Rod
    x0: np.ndarray  # free coordinates of the start equilibrium
    z0: np.ndarray
    steps: int
    bound: float
    node: int = -1  # T1: targeted node
    target: np.ndarray = field(default_factory=lambda: np.zeros(0))  # T1 (2,), T2 (steps, 2), T3 (N-2,)
    tol: float = 1e-9

    @property
    def kind(self) -> str:
        return KINDS[self.name]

    def rollout(self, u: np.ndarray, x_start: np.ndarray, z_start: np.ndarray, first: int = 0) -> Rollout:
        return rollout(self, u, x_start, z_start, first)

    def adjoint_gradient(self, run: Rollout, first: int = 0) -> np.ndarray:
        return adjoint_gradient(self, run, first)

    def trajectory_loss(self, free: list[np.ndarray], z: list[np.ndarray]) -> float:
        """The loss of a whole executed continuation (steps 1..K)."""
        return float(
            np.sum(
                [
                    self.step_loss(k + 1, self.rod.assemble(xf, zk), self.steps)[0]
                    for k, (xf, zk) in enumerate(zip(free, z))
                ]
            )
        )

    def step_loss(self, k: int, x: np.ndarray, last: int) -> tuple[float, np.ndarray | None]:
        """Loss contribution of equilibrium x (full coordinates) at step k (1-based) of a window ending at
        ``last``, and its gradient in x (None when step k does not count)."""
        rod = self.rod
        if self.kind == "tracking":
            mid = rod.nodes // 2
            d = x[2 * mid : 2 * mid + 2] - self.target[k - 1]
            g = np.zeros_like(x)
            g[2 * mid : 2 * mid + 2] = d / self.steps
            return 0.5 * float(d @ d) / self.steps, g
        if k != last:
            return 0.0, None
        if self.kind == "node":
            d = x[2 * self.node : 2 * self.node + 2] - self.target
            g = np.zeros_like(x)
            g[2 * self.node : 2 * self.node + 2] = d
            return 0.5 * float(d @ d), g
        d = rod.curvature(x) - self.target
        return float(d @ d) * rod.l0, 2.0 * rod.l0 * (rod.curvature_jacobian(x).T @ d)


@dataclass
class Rollout:
    """States of one rollout over steps first+1 .. first+len(u), with its loss and solver statistics."""

    free: list[np.ndarray]
    z: list[np.ndarray]
    loss: float
    solves: int
    newton: int
    failures: int


def rollout(task: Task, u: np.ndarray, x_start: np.ndarray, z_start: np.ndarray, first: int = 0) -> Rollout:
    """Apply controls u (H, inputs) from the equilibrium (x_start, z_start) reached after ``first`` steps."""
    xf, z = x_start, z_start
    frees, zs = [], []
    loss, newton, failures = 0.0, 0, 0
    last = first + len(u)
    for j, uj in enumerate(u):
        z = z + task.actuation @ uj
        solve = equilibrium(task.rod, z, xf, tol=task.tol)
        xf, newton, failures = solve.free, newton + solve.iterations, failures + (not solve.converged)
        frees.append(xf)
        zs.append(z)
        loss += task.step_loss(first + j + 1, task.rod.assemble(xf, z), last)[0]
    return Rollout(frees, zs, loss, len(u), newton, failures)


def adjoint_gradient(task: Task, run: Rollout, first: int = 0) -> np.ndarray:
    """dLoss/du_j for every control of a rollout: one adjoint solve per step whose loss counts.

    The equilibrium at step k depends on the controls through z_k = z_start + A sum_{j<=k} u_j only (inside
    the basin it was found in), so dL/du_j = A^T sum_{k>=j} dL/dz_k with dL/dz_k from adjoint_vjp at the
    realised equilibrium: the solver's iterations are never differentiated.
    """
    rod = task.rod
    last = first + len(run.free)
    dz = np.zeros((len(run.free), 6))
    for j, (xf, z) in enumerate(zip(run.free, run.z)):
        _, g = task.step_loss(first + j + 1, rod.assemble(xf, z), last)
        if g is not None:
            dz[j] = adjoint_vjp(rod, xf, z, g[rod.free], g[rod.clamped])
    return np.cumsum(dz[::-1], axis=0)[::-1] @ task.actuation


def branch(rod: Rod, free: np.ndarray, z: np.ndarray) -> int:
    """+1 / -1: whether the rod bulges above or below the chord between its clamps (signed area)."""
    p = rod.assemble(free, z).reshape(-1, 2)
    chord = p[-1] - p[0]
    offset = (p - p[0]) @ np.array([-chord[1], chord[0]]) / np.linalg.norm(chord)
    return 1 if float(np.sum(offset)) >= 0 else -1
