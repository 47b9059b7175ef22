"""Benchmark: cgmt-erm embedded default end to end, and the ERM solver against scipy's L-BFGS.

Usage: python benchmarks/cgmt_erm_default_run.py [--skip-workflow]
Prints the wall and CPU time of `snakemake --cores 2 cgmt_erm --forceall` (run in the repository; it rewrites
results/cgmt-erm/) and the fit throughput of the project's solver (L-BFGS, Newton-polished to |grad| < 1e-8)
versus plain scipy L-BFGS on the same problems, with the distance between their solutions.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from repro.papers.cgmt_erm import designs, erm, losses  # noqa: E402


def workflow_time(target: str) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(["snakemake", "--cores", "2", target, "--forceall", "--quiet"], cwd=REPO, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(
        f"{target}: wall {wall:.1f} s, CPU (all processes) {cpu:.1f} s, load average {Path('/proc/loadavg').read_text().split()[0]}"
    )


def lbfgs(X, y, loss, lam):
    Z, n = X * y[:, None], len(X)

    def f(t):
        r = Z @ t
        return np.mean(losses.value(loss, r)) + 0.5 * lam * t @ t, Z.T @ losses.derivative(loss, r) / n + lam * t

    return minimize(
        f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 5000}
    ).x


def solver_throughput(p: int = 100, ratio: float = 2.0, fits: int = 40) -> None:
    rng = np.random.default_rng(0)
    params = designs.make_params("mixture", p, rng, {"mixture_norm": 2.0, "label_noise": 0.0})
    problems = [designs.sample(params, int(ratio * p), rng) for _ in range(fits)]
    for loss in ("logistic", "squared_hinge"):
        for name, solve in (
            ("repro", lambda X, y: erm.fit(X, y, loss, 0.1)),
            ("plain L-BFGS", lambda X, y: lbfgs(X, y, loss, 0.1)),
        ):
            start = time.perf_counter()
            thetas = [solve(X, y) for X, y in problems]
            dt = time.perf_counter() - start
            gap = max(np.linalg.norm(t - erm.fit(X, y, loss, 0.1)) for t, (X, y) in zip(thetas, problems))
            print(
                f"{loss:14s} {name:13s} p={p} n={int(ratio * p)}: {fits / dt:7.1f} fits/s (max |theta - repro| {gap:.1e})"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-workflow", action="store_true")
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        solver_throughput()
    if not args.skip_workflow:
        workflow_time("cgmt_erm")
