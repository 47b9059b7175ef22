"""The optimisers compared at an equal budget of equilibrium solves, all on the same controller u_Theta(lambda).

- ``adjoint_rhc`` (the paper's method): receding-horizon continuation. The continuation is cut into
  segments of ``horizon`` steps; on each, Adam with adjoint gradients improves the controller for the
  segment's loss starting from the realised equilibrium, the best plan is executed, and the next segment
  re-anchors at the equilibrium it reached.
- ``adjoint_only``: the same adjoint gradients over the whole continuation from the start, every update.
- ``spsa``: simultaneous-perturbation gradient estimates (two rollouts per update) fed to Adam.
- ``cem``: cross-entropy method over the controller's parameters with elite reuse (the iCEM idea of
  keeping elites; coloured noise does not apply to parameters of a network of lambda).
Each returns the best loss it realised, the solves it spent and its loss history. A method sees a task only
through ``rollout``, ``adjoint_gradient`` and ``trajectory_loss`` (plus steps, x0, z0), so the same optimisers
run on the rod and on the learned equilibrium model (``deq.DEQTask``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from repro.papers.neural_control.controller import Adam, Controller
from repro.papers.neural_control.tasks import Rollout, Task, branch

METHODS = ("adjoint_rhc", "adjoint_only", "spsa", "cem")


@dataclass
class Result:
    """What one optimisation run realised."""

    best_loss: float = float("inf")
    solves: int = 0
    updates: int = 0
    newton: int = 0
    failures: int = 0
    wall_s: float = 0.0
    history: list[tuple[int, float]] = field(default_factory=list)  # (solves so far, best loss so far)
    free: list[np.ndarray] = field(default_factory=list)  # best trajectory's equilibria
    z: list[np.ndarray] = field(default_factory=list)
    segments: list[float] = field(default_factory=list)  # Adjoint+RHC: best loss of each executed segment

    def record(self, run: Rollout) -> None:
        self.solves += run.solves
        self.newton += run.newton
        self.failures += run.failures
        if run.loss < self.best_loss:
            self.best_loss, self.free, self.z = run.loss, run.free, run.z
        self.history.append((self.solves, self.best_loss))

    def final_branch(self, task: Task) -> int:
        return branch(task.rod, self.free[-1], self.z[-1])


def grid(task: Task) -> np.ndarray:
    return np.arange(1, task.steps + 1) / task.steps


def adjoint_rhc(task: Task, ctrl: Controller, cfg: dict, budget: int) -> Result:
    lam = grid(task)
    horizon = int(cfg["horizon"])
    segments = int(np.ceil(task.steps / horizon))
    inner = max(1, budget // (segments * horizon))
    out = Result()
    adam = Adam(ctrl.theta.size, cfg["lr"])
    x, z, t = task.x0, task.z0, 0
    while t < task.steps:
        window = lam[t : t + horizon]
        best, best_run, stall = float("inf"), None, 0
        for _ in range(inner):
            run = task.rollout(ctrl.controls(window), x, z, first=t)
            out.solves, out.newton, out.failures = (
                out.solves + run.solves,
                out.newton + run.newton,
                out.failures + run.failures,
            )
            out.updates += 1
            if run.loss < best * (1 - 1e-9):
                best, best_run, best_theta, stall = run.loss, run, ctrl.theta.copy(), 0
            else:
                stall += 1
            if best <= cfg["loss_threshold"] or stall >= cfg["patience"]:
                break
            ctrl.theta = adam.step(ctrl.theta, ctrl.backward(window, task.adjoint_gradient(run, first=t)))
        ctrl.theta = best_theta  # execute the best plan of this segment (its rollout is already solved)
        out.free, out.z = out.free + best_run.free, out.z + best_run.z
        out.segments.append(best)
        x, z, t = best_run.free[-1], best_run.z[-1], t + len(window)
        out.history.append((out.solves, float("nan")))
    out.best_loss = task.trajectory_loss(out.free, out.z)
    out.history[-1] = (out.solves, out.best_loss)
    return out


def adjoint_only(task: Task, ctrl: Controller, cfg: dict, budget: int) -> Result:
    lam = grid(task)
    out = Result()
    adam = Adam(ctrl.theta.size, cfg["lr"])
    while out.solves + task.steps <= budget:
        run = task.rollout(ctrl.controls(lam), task.x0, task.z0)
        out.record(run)
        out.updates += 1
        if out.best_loss <= cfg["loss_threshold"]:
            break
        ctrl.theta = adam.step(ctrl.theta, ctrl.backward(lam, task.adjoint_gradient(run)))
    return out


def spsa(task: Task, ctrl: Controller, cfg: dict, budget: int, rng: np.random.Generator) -> Result:
    lam = grid(task)
    out = Result()
    adam = Adam(ctrl.theta.size, cfg["lr"])
    k = 0
    while out.solves + 2 * task.steps <= budget:
        c = cfg["perturbation"] / (k + 1) ** 0.101
        delta = rng.choice([-1.0, 1.0], size=ctrl.theta.size)
        plus = task.rollout(ctrl.controls(lam, ctrl.theta + c * delta), task.x0, task.z0)
        minus = task.rollout(ctrl.controls(lam, ctrl.theta - c * delta), task.x0, task.z0)
        out.record(plus)
        out.record(minus)
        out.updates += 1
        if out.best_loss <= cfg["loss_threshold"]:
            break
        ctrl.theta = adam.step(ctrl.theta, (plus.loss - minus.loss) / (2 * c) * delta)
        k += 1
    return out


def cem(task: Task, ctrl: Controller, cfg: dict, budget: int, rng: np.random.Generator) -> Result:
    lam = grid(task)
    out = Result()
    population, n_elite = int(cfg["population"]), int(cfg["elites"])
    mean, std = ctrl.theta.copy(), np.full(ctrl.theta.size, cfg["sigma"])
    elites = np.zeros((0, mean.size))
    while out.solves + population * task.steps <= budget:
        keep = elites[: int(cfg["keep_elites"])]
        samples = np.concatenate([keep, mean + std * rng.standard_normal((population - len(keep), mean.size))])
        losses = []
        for theta in samples:
            run = task.rollout(ctrl.controls(lam, theta), task.x0, task.z0)
            out.solves, out.newton, out.failures = (
                out.solves + run.solves,
                out.newton + run.newton,
                out.failures + run.failures,
            )
            if run.loss < out.best_loss:
                out.best_loss, out.free, out.z = run.loss, run.free, run.z
            losses.append(run.loss)
        out.history.append((out.solves, out.best_loss))
        out.updates += 1
        elites = samples[np.argsort(losses)[:n_elite]]
        alpha = cfg["momentum"]
        mean = alpha * mean + (1 - alpha) * elites.mean(0)
        std = alpha * std + (1 - alpha) * elites.std(0)
        if out.best_loss <= cfg["loss_threshold"]:
            break
    return out


def run_method(method: str, task: Task, ctrl: Controller, cfg: dict, budget: int, rng: np.random.Generator) -> Result:
    start = time.perf_counter()
    if method == "adjoint_rhc":
        out = adjoint_rhc(task, ctrl, cfg["adjoint"], budget)
    elif method == "adjoint_only":
        out = adjoint_only(task, ctrl, cfg["adjoint"], budget)
    elif method == "spsa":
        out = spsa(task, ctrl, cfg["spsa"], budget, rng)
    elif method == "cem":
        out = cem(task, ctrl, cfg["cem"], budget, rng)
    else:
        raise ValueError(f"unknown method {method!r}; have {METHODS}")
    out.wall_s = time.perf_counter() - start
    return out
