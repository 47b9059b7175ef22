"""Batched methods against a per-instance loop: oracle iterations per second on the default quadratic games.

The methods advance all instances of one size together (einsum over a leading batch axis); the naive
baseline calls the same code once per instance.
"""

from __future__ import annotations

import time

import numpy as np

from repro.papers.talda.methods import METHODS, run, theory_steps
from repro.papers.talda.problems import QuadraticGames, quadratic_game

ITERATIONS = 300


def main() -> None:
    rng = np.random.default_rng(0)
    couplings = np.repeat([1e-3, 1e-2, 1e-1, 1.0, 10.0], 3)
    inst = [quadratic_game(rng, 10, c, 0.2, 1.0) for c in couplings]
    games = QuadraticGames(*(np.stack([i[k] for i in inst]) for k in ("A", "B", "C", "a", "c")))
    x0, y0 = rng.normal(size=(len(inst), 10)), rng.normal(size=(len(inst), 10))
    for method in METHODS:
        eta_x, eta_y = theory_steps(method, games.constants())
        start = time.perf_counter()
        run(method, games, x0, y0, eta_x, eta_y, ITERATIONS)
        batched = time.perf_counter() - start
        start = time.perf_counter()
        for i in range(len(inst)):
            one = QuadraticGames(*(getattr(games, k)[i : i + 1] for k in ("A", "B", "C", "a", "c")))
            run(method, one, x0[i : i + 1], y0[i : i + 1], eta_x[i : i + 1], eta_y[i : i + 1], ITERATIONS)
        loop = time.perf_counter() - start
        total = len(inst) * ITERATIONS
        print(
            f"{method:6s}: batched {total / batched:,.0f} instance-iterations/s, "
            f"per-instance loop {total / loop:,.0f} /s, speed-up {loop / batched:.1f}x"
        )


if __name__ == "__main__":
    main()
