"""Stage ``cgmt_erm_evaluate``: distances between the empirical law of theta_hat^T x and each prediction,
test errors, the fixed point's convergence over p, the exact ridge check and the regulariser equivalence;
writes metrics.json, claims.json and the curves the figures draw (laws.npz).

The semi-empirical predictions (convolution, Gaussian and Gaussian-mixture equivalents) take the mean and
covariance of theta_hat from the first half of the replicate fits and are compared with the empirical law of
the other half, so that a wrong prediction cannot be rescued by estimating its ingredients from the very
fits whose law it predicts. The fixed-point prediction uses no fit at all.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import chi2, norm

from repro.papers.cgmt_erm import fixed_point, laws
from repro.papers.cgmt_erm.claims import CLAIMS, LEARNING_LOSS
from repro.papers.cgmt_erm.store import dims, families, fit_key, read
from repro.reporting.claims import evaluate_claims, write_claims
from repro.reporting.registry import load_reported
from repro.workflow.io import atomic_path, write_json
from repro.workflow.stores import open_zarr_group

HIST_BINS = 80
LEARNING_ITEMS = 2000  # held-out test points of the learning checks (paired bootstrap over items)


def ridge_moments(X: np.ndarray, theta_star: np.ndarray, sigma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and covariance of ridge when y = X theta* + sigma * noise (fixed X, Gaussian noise)."""
    n, p = X.shape
    gram = X.T @ X / n
    A_inv = np.linalg.inv(gram + lam * np.eye(p))
    return A_inv @ gram @ theta_star, sigma**2 * A_inv @ gram @ A_inv / n


def ridge_check(thetas: np.ndarray, X: np.ndarray, theta_star: np.ndarray, sigma: float, lam: float) -> dict:
    """Monte-Carlo mean and covariance of ridge under label noise against the exact formulas.

    With A = X^T X / n + lam I: E[theta_hat] = A^{-1} X^T X theta* / n and
    Cov[theta_hat] = sigma^2 A^{-1} X^T X A^{-1} / n^2. Returns the Mahalanobis statistic of the mean error
    (R d^T C^{-1} d ~ chi2_p) and the covariance error relative to its expected Wishart size.
    """
    mean, cov = ridge_moments(X, theta_star, sigma, lam)
    p = X.shape[1]
    reps = len(thetas)
    diff = thetas.mean(0) - mean
    mahalanobis = float(reps * diff @ np.linalg.solve(cov, diff))
    emp_cov = np.cov(thetas, rowvar=False)
    expected_sq = (np.sum(cov**2) + np.trace(cov) ** 2) / (reps - 1)
    return {
        "mahalanobis": mahalanobis,
        "dof": p,
        "chi2_999": float(chi2.ppf(0.999, p)),
        "cov_error_ratio": float(np.linalg.norm(emp_cov - cov) / np.sqrt(expected_sq)),
        "cov_rel_error": float(np.linalg.norm(emp_cov - cov) / np.linalg.norm(cov)),
        "reps": reps,
    }


def split_replicates(thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(moment fits, law fits): the first half of the replicates estimates mu and C, the second half gives the
    empirical law the predictions are compared with."""
    half = len(thetas) // 2
    if half < 2 or len(thetas) - half < 1:
        raise ValueError(f"need at least 4 replicate fits to hold half out, got {len(thetas)}")
    return thetas[:half], thetas[half:]


def evaluate_family(
    thetas: np.ndarray, X_test: np.ndarray, y_test: np.ndarray, overlaps, s2, mean_vec
) -> tuple[dict, dict]:
    """Distances and errors for one family of fits (one design, p, loss, regulariser, ratio)."""
    held, law = split_replicates(thetas)
    proj = law @ X_test.T
    mom = laws.Moments.from_fits(held, X_test).held_out()
    grid = laws.grid_for(proj)
    cdfs = {
        "empirical": laws.empirical_cdf(proj, grid),
        "convolution": laws.convolution_cdf(grid, mom.mean_proj, mom.fluct_var),
        "gaussian": laws.gaussian_cdf(grid, mom),
        "gaussian_mixture": laws.gaussian_mixture_equivalent_cdf(grid, mom, y_test),
    }
    err = np.mean(y_test[None, :] * (thetas @ X_test.T) <= 0, axis=1)
    rec = {
        "test_error": float(err.mean()),
        "test_error_sd": float(err.std(ddof=1)),
        "test_error_convolution": float(np.mean(norm.cdf(-y_test * mom.mean_proj / np.sqrt(mom.fluct_var)))),
        "theta_norm": float(np.mean(np.linalg.norm(thetas, axis=1))),
        "fluct_var": mom.fluct_var,
        "moment_reps": len(held),
        "law_reps": len(law),
    }
    if overlaps is not None:
        cdfs["fixed_point"] = laws.gaussian_mixture_cdf(grid, [overlaps.M, -overlaps.M], overlaps.Q)
        mu_pred = overlaps.M / s2 * mean_vec
        var_pred = overlaps.Q - overlaps.M**2 / s2
        rec |= {
            "M": overlaps.M,
            "Q": overlaps.Q,
            "test_error_fixed_point": overlaps.test_error(),
            "mu_rel_error": float(np.linalg.norm(thetas.mean(0) - mu_pred) / np.linalg.norm(mu_pred)),
            "fluct_var_predicted": var_pred,
            "fluct_var_rel_error": abs(mom.fluct_var - var_pred) / var_pred,
        }
    # Finite-replicate noise of the comparison: the law of the moment fits' own projections against the law
    # fits' (same test points, so only the replicates differ). Under the model a prediction built from the
    # moment half is as far from the law half as the moment half's own law is, up to the test-set DKW term.
    rec["ks_replicates"] = laws.ks_distance(laws.empirical_cdf(held @ X_test.T, grid), cdfs["empirical"])
    for name, cdf in cdfs.items():
        if name != "empirical":
            rec[f"ks_{name}"] = laws.ks_distance(cdfs["empirical"], cdf)
            rec[f"w1_{name}"] = laws.wasserstein1(cdfs["empirical"], cdf, grid)
    counts, edges = np.histogram(proj, bins=HIST_BINS, density=True)
    curves = {"grid": grid, "hist": counts, "edges": edges, **{f"cdf_{k}": v for k, v in cdfs.items()}}
    return rec, curves


def fold_ks(thetas: np.ndarray, X_test: np.ndarray, overlaps, folds: int) -> list[float]:
    """KS distance between the fixed-point law and the empirical law of each of ``folds`` disjoint groups of
    replicate fits (the spread over groups gives the interval of the convergence rate)."""
    out = []
    for group in np.array_split(np.arange(len(thetas)), folds):
        proj = thetas[group] @ X_test.T
        grid = laws.grid_for(proj)
        predicted = laws.gaussian_mixture_cdf(grid, [overlaps.M, -overlaps.M], overlaps.Q)
        out.append(laws.ks_distance(laws.empirical_cdf(proj, grid), predicted))
    return out


def learning_errors(thetas: np.ndarray, X_test: np.ndarray, y_test: np.ndarray, y_train: np.ndarray) -> dict:
    """Per held-out test point: 0/1 error of the fits (mean over replicates) and of the trivial predictor, the
    majority sign of the training labels (the class prior), on the first LEARNING_ITEMS test points."""
    x, y = X_test[:LEARNING_ITEMS], y_test[:LEARNING_ITEMS]
    majority = 1.0 if np.mean(y_train) >= 0 else -1.0
    return {
        "model": np.mean(y[None, :] * (thetas @ x.T) <= 0, axis=0).tolist(),
        "trivial": (y != majority).astype(float).tolist(),
    }


def main(job) -> None:
    s = job.params.settings
    data = job.input.store
    records, sweep, curves, ridge, learning = [], [], {}, None, {}
    for path in job.input.fits:
        fits_root = open_zarr_group(path)
        design = path.rsplit("/", 1)[-1].removesuffix(".zarr")
        for p in dims(s, design):
            group, fits = open_zarr_group(data, f"{design}/p{p}"), open_zarr_group(path, f"p{p}")
            X_test, y_test = read(group, "X_test", data).astype(float), read(group, "y_test", data).astype(float)
            mean_vec = read(group, "mean", data) if design == "mixture" else None
            s2 = float(mean_vec @ mean_vec) if mean_vec is not None else None
            for loss, reg, ratio in families(s, design, p):
                thetas = read(fits, fit_key(loss, reg, ratio), path)
                overlaps = (
                    fixed_point.solve(loss, math.ceil(ratio * p) / p, s["lam"], s2)
                    if design == "mixture" and reg == "l2"
                    else None
                )
                if design == "mixture" and p in s["p_sweep"] and reg == "l2" and ratio == s["main_ratio"]:
                    sweep.append({"p": p, "loss": loss, "fold_ks": fold_ks(thetas, X_test, overlaps, s["folds"])})
                if p not in s["p"]:
                    continue
                rec, cur = evaluate_family(thetas, X_test, y_test, overlaps, s2, mean_vec)
                tol = laws.ks_tolerance(len(X_test), s["ks"]["delta"])
                records.append(
                    {"design": design, "p": p, "loss": loss, "reg": reg, "ratio": ratio, "reps": len(thetas)}
                    | {"ks_tolerance": tol}
                    | rec
                )
                if ratio == s["main_ratio"] and reg == "l2" and loss == LEARNING_LOSS and p == max(s["p"]):
                    learning[design] = learning_errors(thetas, X_test, y_test, read(group, "y_train", data))
                if ratio == s["main_ratio"]:
                    curves |= {f"{design}/p{p}/{loss}/{reg}/{k}": v for k, v in cur.items()}
        if "ridge_check" in fits_root:
            check = open_zarr_group(data, "ridge_check")
            ridge = ridge_check(
                read(fits_root, "ridge_check", path),
                read(check, "X", data),
                read(check, "theta_star", data),
                float(check.attrs["sigma"]),
                s["lam"],
            )
    metrics = {
        "records": records,
        "fixed_point_sweep": sweep,
        "ridge_check": ridge,
        "p_main": int(np.max(s["p"])),
        "main_ratio": s["main_ratio"],
        "huber": s["huber"],
        "test_error_tol": s["test_error_tol"],
        "learning": learning,
    }
    write_json(job.output.metrics, metrics)
    with atomic_path(job.output.curves) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **curves)
    claims = evaluate_claims(CLAIMS, metrics, job.params.scale, load_reported(job.input.reported))
    write_claims(job.output.claims, "cgmt-erm", claims)
