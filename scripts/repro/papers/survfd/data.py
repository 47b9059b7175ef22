"""Stage: simulated cohorts (every scenario and seed) and the real cohorts shipped in scikit-survival.

- simulated.npz: ``{scenario}__s{seed}__{x,time,event}``, training cohorts of the simulation design, and for the
  scenarios models are fitted to ``{scenario}__s{seed}__test__{x,time,event}``, an uncensored held-out cohort;
- real.npz: ``{dataset}__{x,time,event,features}`` for ACTG 320 (``load_aids``) and GBSG2, categorical
  columns as numbers (numeric category labels as their value, others as codes);
- manifest.json: seeds, settings, the scikit-survival version and the data licence, sha256 of each file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.papers.survfd.simulate import sample, scenario_from
from repro.workflow.io import atomic_path, sha256, write_json

LOADERS = {"actg320": "load_aids", "gbsg2": "load_gbsg2"}
DATA_LICENCE = "scikit-survival is GPL-3.0-or-later; ACTG 320 and GBSG2 as distributed in sksurv/datasets/data"


def numeric(frame: pd.DataFrame) -> np.ndarray:
    """Float matrix: numeric columns as they are, categories by value when numeric labels, else by code."""
    cols = []
    for name in frame.columns:
        col = frame[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            labels = pd.to_numeric(pd.Series(col.cat.categories), errors="coerce")
            col = col.cat.codes if labels.isna().any() else col.astype(str).astype(float)
        cols.append(np.asarray(col, dtype=float))
    return np.column_stack(cols)


def load_real(name: str) -> dict[str, np.ndarray]:
    from sksurv import datasets

    frame, y = getattr(datasets, LOADERS[name])()
    event_field, time_field = y.dtype.names
    return {
        "x": numeric(frame),
        "time": np.asarray(y[time_field], dtype=float),
        "event": np.asarray(y[event_field], dtype=bool),
        "features": np.array(list(frame.columns)),
    }


def main(job) -> None:
    import sksurv

    settings = job.params.settings
    sim = settings["simulation"]
    cohorts, tests = {}, {}
    for cfg in settings["scenarios"]:
        sc = scenario_from(cfg)
        for seed in settings["seeds"]:
            stream = [int(settings["data_seed"]), int(seed), len(cohorts)]
            drawn = sample(
                np.random.default_rng(stream), sc, sim["n"], sim["baseline_hazard"], sim["clip"], sim["censor_max"]
            )
            cohorts |= {f"{sc.name}__s{seed}__{k}": v for k, v in drawn.items()}
            if sc.name in settings["fitted"]["scenarios"]:
                rng = np.random.default_rng([*stream, 1])  # its own stream: the training cohorts stay as they were
                test = sample(rng, sc, sim["n_test"], sim["baseline_hazard"], sim["clip"], None)
                tests |= {f"{sc.name}__s{seed}__test__{k}": v for k, v in test.items()}
    cohorts |= tests
    real = {f"{name}__{k}": v for name in settings["real"]["datasets"] for k, v in load_real(name).items()}
    for key, arrays in (("simulated", cohorts), ("real", real)):
        with atomic_path(job.output[key]) as tmp:
            np.savez(tmp, **arrays)
    write_json(
        job.output.manifest,
        {
            "source": "embedded simulator + scikit-survival datasets",
            "generator": "repro.papers.survfd.data",
            "package": {"name": "scikit-survival", "version": sksurv.__version__, "licence": DATA_LICENCE},
            "loaders": {name: f"sksurv.datasets.{LOADERS[name]}" for name in settings["real"]["datasets"]},
            "settings": settings,
            "files": {f"{k}.npz": {"sha256": sha256(job.output[k])} for k in ("simulated", "real")},
        },
    )
