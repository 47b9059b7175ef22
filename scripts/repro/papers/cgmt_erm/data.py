"""Rule entry ``cgmt_erm_data``: draw every design's training sets and test set from the seed into one zarr store.

Layout of ``data/cgmt-erm/designs.zarr`` (canonical; the later stages read only this):
  <design>/p<p>/X_train (rep, sample, feature) float32, y_train (rep, sample) int8 in {-1, +1},
  X_test (sample, feature) float32, y_test (sample,), and the design's fixed arrays (mean, teacher, spike,
  weights) with the scalar parameters as attributes; each training set holds max(ratios) * p samples and a
  fit at ratio n/p uses its first n samples.
  ridge_check/X (n, p), theta_star (p,), Y (rep, n): fixed design, Gaussian label noise.
``manifest.json`` records seed, sizes, settings and a checksum of every array.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import zarr

from repro.papers.cgmt_erm import designs, store
from repro.workflow.io import atomic_path, write_json

FIXED_FIELDS = ("mean", "teacher", "spike", "weights")


def design_seed(base: int, design: str, p: int) -> np.random.SeedSequence:
    """Independent stream per (design, p), stable when other designs are added or removed."""
    return np.random.SeedSequence([base, designs.DESIGNS.index(design), p])


def write_design(group: zarr.Group, design: str, p: int, settings: dict, seed: int) -> dict:
    """Draw one design at dimension p into ``group``; return its checksums."""
    params_seq, test_seq, *train_seqs = design_seed(seed, design, p).spawn(2 + settings["reps"])
    params = designs.make_params(design, p, np.random.default_rng(params_seq), settings)
    n_max = math.ceil(max(settings["ratios"]) * p)
    reps = settings["reps"]
    X = group.create_array("X_train", shape=(reps, n_max, p), chunks=(1, n_max, p), dtype=np.float32)
    Y = group.create_array("y_train", shape=(reps, n_max), chunks=(1, n_max), dtype=np.int8)
    digest = {"X_train": hashlib.sha256(), "y_train": hashlib.sha256()}
    for r, seq in enumerate(train_seqs):  # one training set in memory at a time (GBs at full scale)
        x, y = designs.sample(params, n_max, np.random.default_rng(seq))
        X[r], Y[r] = x.astype(np.float32), y.astype(np.int8)
        digest["X_train"].update(x.astype(np.float32).tobytes())
        digest["y_train"].update(y.astype(np.int8).tobytes())
    X_test, y_test = designs.sample(params, settings["n_test"], np.random.default_rng(test_seq))
    arrays = {
        "X_test": X_test.astype(np.float32),
        "y_test": y_test.astype(np.int8),
        **{f: getattr(params, f) for f in FIXED_FIELDS if getattr(params, f) is not None},
    }
    for name, arr in arrays.items():
        group.create_array(name, data=arr)
    group.attrs.update(
        {
            "design": design,
            "p": p,
            "n_max": n_max,
            "label_noise": params.label_noise,
            "spike_strength": params.spike_strength,
            "t_dof": params.t_dof,
        }
    )
    checksums = {name: h.hexdigest() for name, h in digest.items()}
    return checksums | {
        name: hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest() for name, arr in arrays.items()
    }


def main(job) -> None:
    settings, seed = job.params.settings, int(job.params.seed)
    checksums: dict[str, dict] = {}
    with atomic_path(job.output.store) as tmp:
        root = zarr.open_group(tmp, mode="w")
        for design in settings["designs"]:
            for p in store.dims(settings, design):
                key = f"{design}/p{p}"
                checksums[key] = write_design(root.require_group(key), design, p, settings, seed)
        check = settings["ridge_check"]
        rng = np.random.default_rng(np.random.SeedSequence([seed, 99]))
        fixed = designs.fixed_design_ridge(check["n"], check["p"], check["sigma"], check["reps"], rng)
        group = root.require_group("ridge_check")
        for name, arr in fixed.items():
            group.create_array(name, data=arr)
        group.attrs.update(check)
        checksums["ridge_check"] = {k: hashlib.sha256(v.tobytes()).hexdigest() for k, v in fixed.items()}
    write_json(
        job.output.manifest,
        {
            "source": "cgmt-erm simulator (repro.papers.cgmt_erm.designs)",
            "producer": "embedded",
            "seed": seed,
            "settings": settings,
            "sha256": checksums,
        },
    )
