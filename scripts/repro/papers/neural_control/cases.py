"""Start equilibrium and reachable targets of every task case, generated with the simulator itself.

The start is the first buckling mode bulging upwards: the rod is compressed from straight by moving the
right clamp inwards by ``compression`` of its length, in small continuation steps from a slightly bent
guess. Each target is what the simulator realises along a known control path from that start, so every
target is reachable by construction; T3 paths that rotate the actuated end far enough snap the rod through
to the downward branch, which makes the target's branch part of the task.
"""

from __future__ import annotations

import numpy as np

from repro.papers.neural_control.rod import Rod, equilibrium
from repro.papers.neural_control.tasks import Task, branch, rollout

WAVES = ("sine", "circle", "square", "triangle")


def buckled_start(rod: Rod, compression: float, steps: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """(free coordinates, control) of the upward first-mode buckled rod."""
    z = np.array([0.0, 0.0, 0.0, rod.length, 0.0, 0.0])
    xf = rod.straight(z).reshape(-1, 2)
    xf[:, 1] += 0.02 * rod.length * np.sin(np.pi * xf[:, 0] / rod.length)
    xf = xf.ravel()
    for d in np.linspace(0.0, compression, steps + 1)[1:]:
        z = np.array([0.0, 0.0, 0.0, rod.length * (1 - d), 0.0, 0.0])
        solve = equilibrium(rod, z, xf, tol=1e-12)
        if not solve.converged:
            raise RuntimeError(f"buckling continuation did not converge at compression {d:.3f}")
        xf = solve.free
    if branch(rod, xf, z) < 0:
        xf = (xf.reshape(-1, 2) * [1.0, -1.0]).ravel()
    return xf, z


def wave(kind: str, lam: np.ndarray) -> np.ndarray:
    """A unit-amplitude periodic profile of the continuation parameter."""
    phase = 2 * np.pi * lam
    if kind == "sine":
        return np.sin(phase)
    if kind == "circle":
        return np.cos(phase)
    if kind == "square":
        return np.sign(np.sin(phase) + 1e-12)
    if kind == "triangle":
        return 2 / np.pi * np.arcsin(np.sin(phase))
    raise ValueError(f"unknown wave {kind!r}; have {WAVES}")


def control_path(name: str, case: int, steps: int, bound: float, rng: np.random.Generator) -> np.ndarray:
    """The known control path (steps, inputs) a case's target is generated with."""
    lam = np.arange(1, steps + 1) / steps
    if name == "t1":
        freq = rng.uniform(0.3, 0.8, 2)
        phase = rng.uniform(0, 2 * np.pi, 2)
        return 0.8 * bound * np.sin(2 * np.pi * freq * lam[:, None] + phase)
    if name == "t2":
        kind = WAVES[case % len(WAVES)]
        u = np.zeros((steps, 4))
        u[:, 1] = 0.7 * bound * wave(kind, lam)  # left end up/down
        u[:, 3] = -0.7 * bound * wave(kind, lam + 0.25 * (kind == "circle"))
        u[:, 2] = -0.3 * bound * wave(kind, lam + 0.25)  # right end in/out
        return u
    if name == "t3":
        # rotate the actuated end: far enough upwards snaps the arch through to the downward branch, where it
        # stays when the rotation is partly undone (history dependence); rotating downwards keeps it up
        u = np.zeros((steps, 3))
        turn = np.where(lam <= 0.6, 1.0, -1.0) if case == 1 else np.ones(steps)
        u[:, 2] = (-0.8 if case == 3 else 0.9) * bound * turn
        u[:, 1] = (0.3, 0.0, -0.3, 0.4)[case % 4] * bound * np.sin(np.pi * lam)
        u[:, 0] = (0.0, 0.0, -0.2, 0.1)[case % 4] * bound
        return u
    raise ValueError(f"unknown task {name!r}")


def make_case(
    name: str, case: int, rod: Rod, x0: np.ndarray, z0: np.ndarray, settings: dict, seed: int
) -> tuple[Task, np.ndarray, int]:
    """(task with its target, the control path that realises the target, the target's branch)."""
    steps, bound = int(settings["steps"]), float(settings["bound"])
    rng = np.random.default_rng([seed, case, ord(name[1])])
    fractions = settings.get("nodes", [0.2, 0.4, 0.6, 0.8])
    node = int(round(fractions[case % len(fractions)] * (rod.nodes - 1)))
    shape = {"t1": (2,), "t2": (steps, 2), "t3": (rod.nodes - 2,)}[name]
    task = Task(name, rod, x0, z0, steps, bound, node=node, target=np.zeros(shape))
    path = control_path(name, case, steps, bound, rng)
    run = rollout(task, path, x0, z0)
    full = [rod.assemble(xf, z) for xf, z in zip(run.free, run.z)]
    if name == "t1":
        task.target = full[-1][2 * node : 2 * node + 2].copy()
    elif name == "t2":
        mid = rod.nodes // 2
        task.target = np.array([x[2 * mid : 2 * mid + 2] for x in full])
    else:
        task.target = rod.curvature(full[-1])
    return task, path, branch(rod, run.free[-1], run.z[-1])
