"""Stage ``cgmt_erm_train``: fit the estimators of one design on every training set.

For each p, loss and ratio n/p: ``reps`` ridge-regularised fits (rep, feature). At the main ratio and for the
designs listed under ``huber``, also the pseudo-Huber fits and the fits with its quadratic surrogate, whose
linear term uses the mean of the pseudo-Huber fits. At the extra dimensions of ``p_sweep`` ('mixture' only):
ridge fits at the main ratio, for the fixed point's convergence rate. ``ridge_check`` (only in the 'mixture'
job) refits ridge on the fixed design for every label-noise draw. Output: ``results/cgmt-erm/fits/<design>.zarr``.
"""

from __future__ import annotations

import math

import numpy as np
import zarr
from threadpoolctl import threadpool_limits

from repro.papers.cgmt_erm import erm, losses
from repro.papers.cgmt_erm.store import dims, families, fit_key, read, train_arrays
from repro.workflow.io import InputError, atomic_path
from repro.workflow.stores import open_zarr_group


def fit_all(X, Y, n: int, loss: str, lam: float, **kw) -> np.ndarray:
    """One fit per training set on its first n samples; returns (rep, feature). X, Y may be zarr arrays
    (read one training set at a time)."""
    return np.stack(
        [erm.fit(np.asarray(X[r, :n], float), np.asarray(Y[r, :n], float), loss, lam, **kw) for r in range(X.shape[0])]
    )


def fit_family(X, Y, p: int, loss: str, reg: str, ratio: float, s: dict, pseudo_huber: np.ndarray | None):
    """The fits of one family; the surrogate needs the pseudo-Huber fits of the same training sets."""
    n = math.ceil(ratio * p)
    if reg == "l2":
        return fit_all(X, Y, n, loss, s["lam"])
    if reg == "pseudo_huber":
        return fit_all(X, Y, n, loss, s["lam"], reg="pseudo_huber", huber_c=s["huber"]["c"])
    shift = losses.quadratic_surrogate_shift(pseudo_huber.mean(0), s["lam"], s["huber"]["c"])
    return fit_all(X, Y, n, loss, s["lam"], reg="surrogate", shift=shift)


# Below this dimension one BLAS thread is fastest (a 50 x 50 Newton system gains nothing from more, and spare
# threads spin); the choice depends on p alone, never on the cores a run gets, so the fits are the same bits.
BLAS_THREADS_FROM_P = 256


def main(job) -> None:
    s, design, data = job.params.settings, job.wildcards.design, job.input.store
    with atomic_path(job.output.fits) as tmp:
        out = zarr.open_group(tmp, mode="w")
        for p in dims(s, design):
            with threadpool_limits(limits=job.threads if p >= BLAS_THREADS_FROM_P else 1):
                fit_dimension(out, s, design, data, p)
        if design == "mixture":
            check = open_zarr_group(data, "ridge_check")
            Xf, Yf = read(check, "X", data), read(check, "Y", data)
            with threadpool_limits(limits=job.threads if Xf.shape[1] >= BLAS_THREADS_FROM_P else 1):
                out.create_array("ridge_check", data=np.stack([erm.ridge(Xf, yf, s["lam"]) for yf in Yf]))


def fit_dimension(out, s: dict, design: str, data, p: int) -> None:
    """Every family of fits of ``design`` at dimension ``p`` into group ``p<p>`` of ``out``."""
    group = open_zarr_group(data, f"{design}/p{p}")
    X, Y = train_arrays(group, data)
    needed = max(math.ceil(ratio * p) for _, _, ratio in families(s, design, p))
    if X.shape[1] < needed:
        raise InputError(data, f"{design}/p{p} holds {X.shape[1]} samples per training set, fewer than the ratios need")
    target, pseudo_huber = out.require_group(f"p{p}"), None
    for loss, reg, ratio in families(s, design, p):
        fits = fit_family(X, Y, p, loss, reg, ratio, s, pseudo_huber)
        pseudo_huber = fits if reg == "pseudo_huber" else pseudo_huber
        target.create_array(fit_key(loss, reg, ratio), data=fits)
