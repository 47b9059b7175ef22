"""Stage: every method on every case of one task, for every seed, at the task's budget of equilibrium solves.

Writes ``runs/<task>.npz`` with arrays over (method, case, seed): best realised loss, solves, updates,
Newton iterations, solver failures, wall time, the branch of the best trajectory's final state, the
best-loss history against solves (padded with NaN) and the best trajectory's equilibria (step, 2N); and over
(case, seed) the loss of the untrained controller every method starts from (``initial_loss``: the trivial
predictor of the learning checks).
"""

from __future__ import annotations

import logging

import numpy as np

from repro.papers.neural_control.controller import Controller
from repro.papers.neural_control.files import load_arrays
from repro.papers.neural_control.methods import METHODS, grid, run_method
from repro.papers.neural_control.rod import Rod
from repro.papers.neural_control.tasks import Task
from repro.workflow.io import atomic_path
from repro.workflow.progress import Progress

LOG = logging.getLogger(__name__)
CASE_KEYS = ("x0", "z0", "rod", "steps", "bound", "target", "node", "branch")
SCALARS = ("best_loss", "solves", "updates", "newton", "failures", "wall_s", "branch")


def load_cases(path: str, name: str) -> list[Task]:
    data = load_arrays(path, CASE_KEYS, "task cases")
    nodes, length, ea, ei = data["rod"]
    rod = Rod(int(nodes), float(length), float(ea), float(ei))
    steps, bound = int(data["steps"]), float(data["bound"])
    return [
        Task(name, rod, data["x0"], data["z0"], steps, bound, node=int(node), target=target)
        for node, target in zip(data["node"], data["target"])
    ]


def main(job) -> None:
    settings = job.params.settings
    name = job.wildcards.task
    cases = load_cases(job.input.cases, name)
    seeds, budget = settings["seeds"], int(settings["budget"][name])
    shape = (len(METHODS), len(cases), len(seeds))
    out = {k: np.full(shape, np.nan) for k in SCALARS}
    steps, coords = cases[0].steps, 2 * cases[0].rod.nodes
    out["trajectory"] = np.full((*shape, steps, coords), np.nan)
    history = np.full((*shape, budget + 1, 2), np.nan)
    initial_loss = np.full(shape[1:], np.nan)
    ctrl_cfg = settings["controller"]
    progress = Progress(f"neural-control {name}", total=int(np.prod(shape)), unit="runs", logger=LOG)
    for c, task in enumerate(cases):
        for s, seed in enumerate(seeds):
            start = Controller(ctrl_cfg["hidden"], task.inputs, task.bound, np.random.default_rng([int(seed), c]),
                               float(ctrl_cfg["out_scale"]))  # fmt: skip
            initial_loss[c, s] = task.rollout(start.controls(grid(task)), task.x0, task.z0).loss
            for m, method in enumerate(METHODS):
                init = np.random.default_rng([int(seed), c])  # same controller start for every method
                ctrl = Controller(ctrl_cfg["hidden"], task.inputs, task.bound, init, float(ctrl_cfg["out_scale"]))
                result = run_method(
                    method, task, ctrl, settings["methods"], budget, np.random.default_rng([int(seed), c, m])
                )
                for key in SCALARS[:-1]:
                    out[key][m, c, s] = getattr(result, key)
                out["branch"][m, c, s] = result.final_branch(task)
                out["trajectory"][m, c, s] = [task.rod.assemble(xf, z) for xf, z in zip(result.free, result.z)]
                history[m, c, s, : len(result.history)] = result.history
                progress.update(method=method, case=c, seed=int(seed), loss=float(result.best_loss))
    with atomic_path(job.output.runs) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(
                fh, methods=np.array(METHODS), seeds=np.array(seeds), history=history, initial_loss=initial_loss, **out
            )
