"""Rule entry ``cgmt_erm_train``: fit the estimators of one design on every training set.

For each p, loss and ratio n/p: ``reps`` ridge-regularised fits (rep, feature). At the main ratio and for the
designs listed under ``huber``, also the pseudo-Huber fits and the fits with its quadratic surrogate, whose
linear term uses the mean of the pseudo-Huber fits. ``ridge_check`` (only in the 'mixture' job) refits ridge
on the fixed design for every label-noise draw. Output: ``results/cgmt-erm/fits/<design>.zarr``.
"""

from __future__ import annotations

import math

import numpy as np
import zarr
from threadpoolctl import threadpool_limits

from repro.io import InputError, atomic_path
from repro.papers.cgmt_erm import erm, losses
from repro.papers.cgmt_erm.store import fit_key, read, train_arrays
from repro.stores import open_zarr_group


def fit_all(X, Y, n: int, loss: str, lam: float, **kw) -> np.ndarray:
    """One fit per training set on its first n samples; returns (rep, feature). X, Y may be zarr arrays
    (read one training set at a time)."""
    return np.stack(
        [erm.fit(np.asarray(X[r, :n], float), np.asarray(Y[r, :n], float), loss, lam, **kw) for r in range(X.shape[0])]
    )


def main(job) -> None:
    s, design, data = job.params.settings, job.wildcards.design, job.input.store
    with threadpool_limits(limits=job.threads), atomic_path(job.output[0]) as tmp:
        out = zarr.open_group(tmp, mode="w")
        for p in s["p"]:
            group = open_zarr_group(data, f"{design}/p{p}")
            X, Y = train_arrays(group, data)
            if X.shape[1] < max(math.ceil(ratio * p) for ratio in s["ratios"]):
                raise InputError(
                    data, f"{design}/p{p} holds {X.shape[1]} samples per training set, fewer than the ratios need"
                )
            target = out.require_group(f"p{p}")
            for loss in s["losses"]:
                for ratio in s["ratios"]:
                    n = math.ceil(ratio * p)
                    target.create_array(fit_key(loss, "l2", ratio), data=fit_all(X, Y, n, loss, s["lam"]))
            huber = s["huber"]
            if design in huber["designs"]:
                n, loss = math.ceil(s["main_ratio"] * p), huber["loss"]
                ph = fit_all(X, Y, n, loss, s["lam"], reg="pseudo_huber", huber_c=huber["c"])
                shift = losses.quadratic_surrogate_shift(ph.mean(0), s["lam"], huber["c"])
                sur = fit_all(X, Y, n, loss, s["lam"], reg="surrogate", shift=shift)
                target.create_array(fit_key(loss, "pseudo_huber", s["main_ratio"]), data=ph)
                target.create_array(fit_key(loss, "surrogate", s["main_ratio"]), data=sur)
        if design == "mixture":
            check = open_zarr_group(data, "ridge_check")
            Xf, Yf = read(check, "X", data), read(check, "Y", data)
            out.create_array("ridge_check", data=np.stack([erm.ridge(Xf, yf, s["lam"]) for yf in Yf]))
