"""Stage: run every method on every generated problem, with theory and best-of-grid step sizes.

Two step-size policies, each the same for every method:
- ``theory``: each method's own theory steps (``methods.theory_steps``; labelled as such in the claims);
- ``tuned``: best of one common grid of absolute step sizes. The larger of a method's two steps takes the
  values ``tuned_scales / L`` (L the problem's smoothness), the smaller keeps the method's theory ratio
  eta_x / eta_y (its two-timescale design); per instance the grid point with the fastest rate per oracle
  call is kept. The grid is the same in absolute terms for every method, so no method is handicapped by how
  conservative its theory step is.

Writes one xarray Dataset (zarr) with dims (algorithm, steps, instance, iteration): squared distance to the
saddle, cumulative oracle calls, TALDA's surrogate W, the step sizes used, and per TALDA run the number of
iterations whose descent-ascent step the Lyapunov safeguard rejected and the number of active iterations.
Instances of all families are stacked along ``instance`` with coordinates family, dim, coupling and seed.
"""

from __future__ import annotations

import logging

import numpy as np
import xarray as xr

from repro.papers.talda.methods import METHODS, run, theory_steps
from repro.papers.talda.problems import QuadraticGames, YangExample
from repro.papers.talda.rates import fit_rate
from repro.workflow.io import InputError, atomic_path

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


def grid_steps(method: str, constants: dict, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(eta_x, eta_y) at one point of the common grid: the larger step is scale / L, the ratio the theory's."""
    eta_x, eta_y = theory_steps(method, constants)
    larger = np.maximum(eta_x, eta_y)
    return scale / constants["l"] * eta_x / larger, scale / constants["l"] * eta_y / larger


def best_of_grid(method, problem, x0, y0, scales, iterations, fit_cfg):
    """Per instance, the grid point (common absolute step sizes) with the fastest rate per oracle call."""
    steps = [grid_steps(method, problem.constants(), s) for s in scales]
    traces = [run(method, problem, x0, y0, ex, ey, iterations) for ex, ey in steps]
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
        trace.corrections = np.stack([tr.corrections for tr in traces])[best, pick]
        trace.extras["active"] = np.stack([tr.extras["active"] for tr in traces])[best, pick]
    eta_x, eta_y = (np.stack([s[k] for s in steps])[best, pick] for k in (0, 1))
    return trace, eta_x, eta_y


def main(job) -> None:
    settings = job.params.settings
    iterations, fit_cfg = settings["iterations"], settings["fit"]
    blocks = []
    for coords, problem, x0, y0 in problem_sets(job.input, settings):
        n = len(x0)
        shape = (len(METHODS), len(STEPS), n)
        error, calls = np.full((*shape, iterations + 1), np.nan), np.full((*shape, iterations + 1), np.nan)
        lyap = np.full((len(STEPS), n, iterations + 1), np.nan)
        rejected, active = np.full((len(STEPS), n), np.nan), np.full((len(STEPS), n), np.nan)
        etas = np.full((2, *shape), np.nan)
        for i, method in enumerate(METHODS):
            eta_x, eta_y = theory_steps(method, problem.constants())
            runs = [
                (run(method, problem, x0, y0, eta_x, eta_y, iterations), eta_x, eta_y),
                best_of_grid(method, problem, x0, y0, settings["tuned_scales"], iterations, fit_cfg),
            ]
            for j, (trace, ex, ey) in enumerate(runs):
                error[i, j], calls[i, j], etas[0, i, j], etas[1, i, j] = trace.error, trace.calls, ex, ey
                if method == "talda":
                    lyap[j], rejected[j], active[j] = trace.lyapunov, trace.corrections, trace.extras["active"]
        LOG.info("%s d=%s: %d instances done", coords["family"][0], coords["dim"][0], n)
        blocks.append(
            xr.Dataset(
                {
                    "error": (("algorithm", "steps", "instance", "iteration"), error),
                    "calls": (("algorithm", "steps", "instance", "iteration"), calls),
                    "lyapunov": (("steps", "instance", "iteration"), lyap),
                    "rejected": (("steps", "instance"), rejected),
                    "active": (("steps", "instance"), active),
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
    with atomic_path(job.output.runs) as tmp:
        ds.to_zarr(tmp, mode="w")
