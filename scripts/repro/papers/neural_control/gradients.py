"""Stage: the adjoint against central finite differences, and autograd memory of unrolling versus the adjoint.

- Finite differences: at ``checks`` random controls near the buckled start, d(v . x*)/dz from one adjoint
  solve against central differences of re-solved equilibria (step ``fd_step``, warm-started so that both
  stay in the basin of x*; the branch of each is checked).
- Memory: on a rod of ``memory_nodes`` nodes, bytes autograd saves to differentiate v . x* with respect to
  the clamp controls, (a) by unrolling n plain Newton iterations and (b) by the adjoint at the equilibrium
  reached after the same n iterations, for each n in ``newton_iterations``; both gradients are compared.
"""

from __future__ import annotations

import numpy as np
import torch

from repro.papers.neural_control.cases import buckled_start
from repro.papers.neural_control.files import load_arrays
from repro.papers.neural_control.rod import Rod, adjoint_vjp, equilibrium
from repro.papers.neural_control.tasks import branch
from repro.papers.neural_control.unrolled import adjoint_gradient, unrolled_gradient
from repro.workflow.io import write_json

TIGHT = 1e-13


def finite_difference_checks(rod: Rod, x0: np.ndarray, z0: np.ndarray, cfg: dict, seed: int) -> list[dict]:
    rng = np.random.default_rng([seed, 17])
    h = float(cfg["fd_step"])
    rows = []
    for _ in range(int(cfg["checks"])):
        z = z0 + rng.uniform(-0.02, 0.02, 6)
        xs = equilibrium(rod, z, x0, tol=TIGHT, extra=2)
        v = rng.standard_normal(xs.free.size)
        adjoint = adjoint_vjp(rod, xs.free, z, v)
        fd, same_basin = np.zeros(6), True
        for j in range(6):
            dz = np.zeros(6)
            dz[j] = h
            plus = equilibrium(rod, z + dz, xs.free, tol=TIGHT, extra=2)
            minus = equilibrium(rod, z - dz, xs.free, tol=TIGHT, extra=2)
            fd[j] = v @ (plus.free - minus.free) / (2 * h)
            same_basin &= branch(rod, plus.free, z + dz) == branch(rod, minus.free, z - dz) == branch(rod, xs.free, z)
        rows.append(
            {
                "relative_error": float(np.linalg.norm(adjoint - fd) / np.linalg.norm(fd)),
                "same_basin": bool(same_basin),
                "converged": bool(xs.converged),
            }
        )
    return rows


def memory_comparison(cfg: dict, rod_cfg: dict, seed: int) -> list[dict]:
    torch.set_default_dtype(torch.float64)
    rod = Rod(int(cfg["memory_nodes"]), float(rod_cfg["length"]), float(rod_cfg["ea"]), float(rod_cfg["ei"]))
    x0, z0 = buckled_start(rod, float(rod_cfg["compression"]))
    rng = np.random.default_rng([seed, 23])
    z = z0 + rng.uniform(-0.02, 0.02, 6)
    v = torch.tensor(rng.standard_normal(x0.size))
    rows = []
    for n in cfg["newton_iterations"]:
        dz_unrolled, bytes_unrolled = unrolled_gradient(rod, torch.tensor(x0), torch.tensor(z), v, int(n))
        solve = equilibrium(rod, z, x0, tol=0.0, max_iter=int(n))  # the same n Newton iterations, no graph
        dz_adjoint, bytes_adjoint = adjoint_gradient(rod, torch.tensor(solve.free), torch.tensor(z), v)
        rows.append(
            {
                "newton_iterations": int(n),
                "unrolled_bytes": int(bytes_unrolled),
                "adjoint_bytes": int(bytes_adjoint),
                "gradient_difference": float(
                    torch.linalg.norm(dz_unrolled - dz_adjoint) / torch.linalg.norm(dz_adjoint)
                ),
            }
        )
    return rows


def main(job) -> None:
    settings = job.params.settings
    data = load_arrays(job.input.cases, ("rod", "x0", "z0"), "rod and start state")
    nodes, length, ea, ei = data["rod"]
    x0, z0 = data["x0"], data["z0"]
    rod = Rod(int(nodes), float(length), float(ea), float(ei))
    cfg, seed = settings["gradients"], int(job.params.seed)
    write_json(
        job.output.gradients,
        {
            "finite_differences": finite_difference_checks(rod, x0, z0, cfg, seed),
            "memory": memory_comparison(cfg, settings["rod"], seed),
        },
    )
