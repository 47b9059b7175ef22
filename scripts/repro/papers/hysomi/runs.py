"""The training stage's run files, read into one mapping (numpy only, so the figures need no torch).

A ``calibrated`` run holds two baselines that share one per-sample calibration: ``per_sample`` (B3, the
parameters of the nearest training sample) and ``two_step`` (B5, a ridge regression of them on traits).
"""

from __future__ import annotations

import numpy as np

from repro.workflow.io import InputError

METHODS = ("constrained", "unconstrained", "global", "blackbox", "per_sample", "two_step")
TRANSFERS = {"per_sample": "nearest", "two_step": "regression"}


def load_runs(paths: list[str]) -> dict[tuple[str, str], dict]:
    """``{(level, method): run}`` for every method of ``METHODS`` found in the run files."""
    runs = {}
    for path in paths:
        try:
            with np.load(path) as npz:
                run = {k: npz[k] for k in npz.files}
        except (OSError, ValueError) as err:
            raise InputError(path, f"cannot read the run file ({err})") from err
        level, method = str(run["complexity"]), str(run["method"])
        if method != "calibrated":
            runs[(level, method)] = run
            continue
        for name, how in TRANSFERS.items():
            runs[(level, name)] = run | {"method": name, "theta": run[f"theta_{how}"], "traj": run[f"traj_{how}"]}
    return runs
