"""Stage: fit the DEQ-style learned equilibrium model to simulator equilibria, check its implicit gradients, and
track reachable targets through it with Adjoint+RHC against SPSA and CEM at an equal budget of fixed-point solves.

Training data: ``paths`` random continuation paths from the buckled start (T1's actuation: both clamps moved
transversally, steps bounded by T1's bound), the rod's midpoint at each realised equilibrium; ``heldout`` more
paths measure the fit. Tracking cases: targets are the model's own midpoint outputs along known smooth control
paths, so each is reachable (as the paper's targets are for its slinky model). Writes ``learned.json``.
"""

from __future__ import annotations

import copy

import numpy as np

from repro.papers.neural_control.controller import Controller
from repro.papers.neural_control.deq import DEQ, DEQTask, fit
from repro.papers.neural_control.files import load_arrays
from repro.papers.neural_control.methods import grid, run_method
from repro.papers.neural_control.rod import Rod, equilibrium
from repro.papers.neural_control.tasks import actuation
from repro.workflow.io import write_json

METHODS = ("adjoint_rhc", "spsa", "cem")


def midpoint(rod: Rod, free: np.ndarray, z: np.ndarray) -> np.ndarray:
    return rod.assemble(free, z).reshape(-1, 2)[rod.nodes // 2]


def simulator_paths(rod: Rod, x0, z0, bound: float, paths: int, steps: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(paths, steps, 6) controls and (paths, steps, 2) midpoints of random continuation paths."""
    a = actuation("t1")
    zs, ys = np.zeros((paths, steps, 6)), np.zeros((paths, steps, 2))
    for p in range(paths):
        xf, z = x0, z0
        for k in range(steps):
            z = z + a @ rng.uniform(-bound, bound, a.shape[1])
            solve = equilibrium(rod, z, xf, tol=1e-10)
            xf = solve.free
            zs[p, k], ys[p, k] = z, midpoint(rod, xf, z)
    return zs, ys


def gradient_check(model: DEQ, z: np.ndarray, y: np.ndarray, step: float, coords: int, rng) -> float:
    """Largest relative error of implicit gradients (fit loss in parameters) against central differences."""
    _, grad, _ = model.fit_loss_and_gradient(z, y)
    theta = model.flat()
    idx = rng.choice(theta.size, size=coords, replace=False)
    fd = np.zeros(coords)
    for i, j in enumerate(idx):
        for sign in (1.0, -1.0):
            t = theta.copy()
            t[j] += sign * step
            probe = copy.deepcopy(model)
            probe.rho = np.inf  # no projection inside the difference quotient
            probe.set_flat(t)
            fd[i] += sign * probe.fit_loss_and_gradient(z, y)[0] / (2 * step)
    return float(np.linalg.norm(fd - grad[idx]) / np.linalg.norm(grad[idx]))


def control_gradient_check(task: DEQTask, u: np.ndarray, step: float) -> float:
    """Relative error of the adjoint dLoss/du through the model against central differences of rollouts."""
    grad = task.adjoint_gradient(task.rollout(u, task.x0, task.z0))
    fd = np.zeros_like(u)
    for idx in np.ndindex(u.shape):
        du = np.zeros_like(u)
        du[idx] = step
        fd[idx] = (task.rollout(u + du, task.x0, task.z0).loss - task.rollout(u - du, task.x0, task.z0).loss) / (
            2 * step
        )
    return float(np.linalg.norm(fd - grad) / np.linalg.norm(grad))


def tracking_case(model: DEQ, x0: np.ndarray, z0: np.ndarray, steps: int, bound: float, case: int) -> DEQTask:
    """A target the model reaches along a known smooth path: phase-shifted sines of lambda in both clamps."""
    lam = np.arange(1, steps + 1) / steps
    u = 0.6 * bound * np.stack([np.sin(2 * np.pi * lam + case), np.cos(2 * np.pi * lam + 2 * case)], axis=1)
    probe = DEQTask(model, x0, z0, steps, bound, np.zeros((steps, 2)))
    run = probe.rollout(u, x0, z0)
    return DEQTask(model, x0, z0, steps, bound, model.output(np.stack(run.free)))


def main(job) -> None:
    settings = job.params.settings
    cfg = settings["learned"]
    data = load_arrays(job.input.cases, ("x0", "z0", "rod", "bound"), "task cases")
    nodes, length, ea, ei = data["rod"]
    rod = Rod(int(nodes), float(length), float(ea), float(ei))
    x0, z0, bound = data["x0"], data["z0"], float(data["bound"])
    rng = np.random.default_rng([int(settings["data_seed"]), 31])
    n_fit = int(cfg["paths"])
    zs, ys = simulator_paths(rod, x0, z0, bound, n_fit + int(cfg["heldout"]), int(cfg["path_steps"]), rng)
    z_fit, y_fit = zs[:n_fit].reshape(-1, 6), ys[:n_fit].reshape(-1, 2)
    z_out, y_out = zs[n_fit:].reshape(-1, 6), ys[n_fit:].reshape(-1, 2)
    model = DEQ.init(int(cfg["width"]), z_fit, y_fit, rng, float(cfg["rho"]))
    history = fit(model, z_fit, y_fit, int(cfg["fit_steps"]), float(cfg["lr"]))
    h_out, _ = model.solve(z_out)
    spread = np.sqrt(np.mean(np.sum((y_out - y_out.mean(0)) ** 2, axis=1)))
    heldout_sq = np.sum((model.output(h_out) - y_out) ** 2, axis=1)
    heldout_error = float(np.sqrt(np.mean(heldout_sq)) / spread)
    fd_theta = gradient_check(model, z_fit[:20], y_fit[:20], float(cfg["fd_step"]), 12, rng)
    h0, _ = model.solve(z0[None])
    tasks = [tracking_case(model, h0[0], z0, int(cfg["steps"]), bound, c) for c in range(int(cfg["cases"]))]
    fd_u = control_gradient_check(tasks[0], rng.uniform(-bound, bound, (tasks[0].steps, 2)), float(cfg["fd_step"]))
    ctrl_cfg = settings["controller"]
    runs = {m: {"best_loss": [], "max_segment_loss": []} for m in METHODS}
    initial_loss = []
    for c, task in enumerate(tasks):
        for seed in settings["seeds"]:
            start = Controller(ctrl_cfg["hidden"], task.inputs, task.bound, np.random.default_rng([int(seed), c]),
                               float(ctrl_cfg["out_scale"]))  # fmt: skip
            initial_loss.append(task.rollout(start.controls(grid(task)), task.x0, task.z0).loss)
            for m, method in enumerate(METHODS):
                init = np.random.default_rng([int(seed), c])
                ctrl = Controller(ctrl_cfg["hidden"], task.inputs, task.bound, init, float(ctrl_cfg["out_scale"]))
                result = run_method(
                    method,
                    task,
                    ctrl,
                    settings["methods"],
                    int(cfg["budget"]),
                    np.random.default_rng([int(seed), c, m]),
                )
                runs[method]["best_loss"].append(result.best_loss)
                runs[method]["max_segment_loss"].append(float(np.max(result.segments)) if result.segments else np.nan)
    shape = (len(tasks), len(settings["seeds"]))
    write_json(
        job.output.learned,
        {
            "seeds": list(settings["seeds"]),
            "fit_loss": history,
            "heldout_relative_error": heldout_error,
            "heldout_sq_error": heldout_sq.tolist(),
            "heldout_sq_error_of_mean": np.sum((y_out - y_fit.mean(0)) ** 2, axis=1).tolist(),
            "initial_loss": np.asarray(initial_loss, dtype=float).reshape(shape).tolist(),
            "ift_fd_relative_error_parameters": fd_theta,
            "ift_fd_relative_error_controls": fd_u,
            "contraction_bound": float(np.linalg.norm(model.W)),
            "methods": {
                m: {k: np.asarray(v, dtype=float).reshape(shape).tolist() for k, v in r.items()}
                for m, r in runs.items()
            },
        },
    )
