"""Stage: run every method on every generated problem, with theory and best-of-grid step sizes.

Writes one xarray Dataset (zarr) with dims (algorithm, steps, instance, iteration): squared distance to the
saddle, cumulative oracle calls, TALDA's surrogate W, and the step sizes used. Instances of all
families are stacked along ``instance`` with coordinates family, dim, coupling and seed.
"""

from __future__ import annotations

import logging

import numpy as np
import xarray as xr

from repro.io import InputError, atomic_path
from repro.papers.talda.methods import METHODS, run, theory_steps
from repro.papers.talda.problems import QuadraticGames, YangExample
from repro.papers.talda.rates import fit_rate

LOG = logging.getLogger(__name__)
STEPS = ("theory", "tuned")


def load_npz(path: str, keys: list[str]) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        missing = [k for k in keys if k not in data.files]
        if missing:
            raise InputError(path, f"missing arrays {missing}")
        return {k: data[k] for k in data.files}


def problem_sets(inputs, settings: dict) -> list[tuple[dict, object, np.ndarray, np.ndarray]]:
    """(coords, problem batch, x0, y0) for each family and dimension."""
    sets = []
    for family in ("quadratic", "robust_ls"):
        path = inputs[family]
        for d in settings["dims"]:
            keys = [f"{k}_d{d}" for k in ("A", "B", "C", "a", "c", "x0", "y0", "seed")]
            data = load_npz(path, keys)
            game = QuadraticGames(*(data[f"{k}_d{d}"] for k in ("A", "B", "C", "a", "c")))
            n = len(data[f"seed_d{d}"])
            coupling = data.get(f"coupling_d{d}", game.constants()["l_xy"])
            coords = {"family": [family] * n, "dim": [d] * n, "coupling": coupling, "seed": data[f"seed_d{d}"]}
            sets.append((coords, game, data[f"x0_d{d}"], data[f"y0_d{d}"]))
    data = load_npz(inputs["yang"], ["x0", "y0", "l_xx", "l_yy", "l_xy", "mu_x", "mu_y", "l"])
    n = len(data["x0"])
    yang = YangExample(n, {k: data[k] for k in ("l_xx", "l_yy", "l_xy", "mu_x", "mu_y", "l")})
    coords = {"family": ["yang"] * n, "dim": [1] * n, "coupling": yang.constants()["l_xy"], "seed": np.arange(n)}
    sets.append((coords, yang, data["x0"], data["y0"]))
    return sets


def best_of_grid(method, problem, x0, y0, multipliers, iterations, fit_cfg):
    """Per instance, the multiplier of the theory steps with the fastest rate per oracle call."""
    eta_x, eta_y = theory_steps(method, problem.constants())
    traces = [run(method, problem, x0, y0, m * eta_x, m * eta_y, iterations) for m in multipliers]
    slopes = np.array(
        [[fit_rate(tr.error[i], tr.calls[i], **fit_cfg)["slope"] for i in range(len(x0))] for tr in traces]
    )
    best = np.argmin(np.where(np.isfinite(slopes), slopes, np.inf), axis=0)
    pick = np.arange(len(x0))
    trace = traces[0]
    for field in ("error", "calls"):
        setattr(trace, field, np.stack([getattr(tr, field) for tr in traces])[best, pick])
    if method == "talda":
        trace.lyapunov = np.stack([tr.lyapunov for tr in traces])[best, pick]
    chosen = np.asarray(multipliers)[best]
    return trace, chosen * eta_x, chosen * eta_y


def main(job) -> None:
    settings = job.params.settings
    iterations, fit_cfg = settings["iterations"], settings["fit"]
    blocks = []
    for coords, problem, x0, y0 in problem_sets(job.input, settings):
        n = len(x0)
        shape = (len(METHODS), len(STEPS), n)
        error, calls = np.full((*shape, iterations + 1), np.nan), np.full((*shape, iterations + 1), np.nan)
        lyap = np.full((len(STEPS), n, iterations + 1), np.nan)
        etas = np.full((2, *shape), np.nan)
        for i, method in enumerate(METHODS):
            eta_x, eta_y = theory_steps(method, problem.constants())
            runs = [
                (run(method, problem, x0, y0, eta_x, eta_y, iterations), eta_x, eta_y),
                best_of_grid(method, problem, x0, y0, settings["tuned_multipliers"], iterations, fit_cfg),
            ]
            for j, (trace, ex, ey) in enumerate(runs):
                error[i, j], calls[i, j], etas[0, i, j], etas[1, i, j] = trace.error, trace.calls, ex, ey
                if method == "talda":
                    lyap[j] = trace.lyapunov
        LOG.info("%s d=%s: %d instances done", coords["family"][0], coords["dim"][0], n)
        blocks.append(
            xr.Dataset(
                {
                    "error": (("algorithm", "steps", "instance", "iteration"), error),
                    "calls": (("algorithm", "steps", "instance", "iteration"), calls),
                    "lyapunov": (("steps", "instance", "iteration"), lyap),
                    "eta_x": (("algorithm", "steps", "instance"), etas[0]),
                    "eta_y": (("algorithm", "steps", "instance"), etas[1]),
                },
                coords={
                    "algorithm": list(METHODS),
                    "steps": list(STEPS),
                    "iteration": np.arange(iterations + 1),
                    **{k: ("instance", np.asarray(v)) for k, v in coords.items()},
                },
            )
        )
    ds = xr.concat(blocks, dim="instance")
    ds = ds.assign_coords(instance=np.arange(ds.sizes["instance"]))
    ds.attrs["fit"] = str(fit_cfg)
    with atomic_path(job.output[0]) as tmp:
        ds.to_zarr(tmp, mode="w")
