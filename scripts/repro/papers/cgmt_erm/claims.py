"""cgmt-erm's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

The semi-empirical predictions (convolution, Gaussian and Gaussian-mixture equivalents) are built from
replicates held out from the empirical law they are compared with (evaluate.split_replicates), and their KS
distances are measured in units of the comparison's sampling error: the DKW bound of the test set plus the
KS distance between the two halves' own empirical laws (the finite-replicate noise: with a non-centred design
the replicate-average mean of theta^T x differs between halves by about sqrt(E[x]^T C E[x] (1/R1 + 1/R2))).
Each test reads "ours <= 1" or "ours > 1".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import (
    ClaimSpec,
    Interval,
    Measured,
    Test,
    learning_check,
    seed_interval,
    skill_of,
)

Metrics = Mapping[str, Any]
THEORY_RATE = -0.5  # finite-size corrections of the asymptotic law are O(1 / sqrt(p))
RATE_TOL = 0.25
LEARNING_LOSS = "logistic"  # the fits whose held-out error the learning checks compare with the class prior
DESIGNS = ("mixture", "iid_t", "relu_features", "localized")


def learn_id(design: str) -> str:
    return f"learn_erm_{design}"


def main_records(m: Metrics, design: str, reg: str = "l2") -> list[dict]:
    """Records at the largest p and the main ratio (one per loss); KeyError when the design is absent."""
    recs = [
        r
        for r in m["records"]
        if r["design"] == design and r["reg"] == reg and r["p"] == m["p_main"] and r["ratio"] == m["main_ratio"]
    ]
    if not recs:
        raise KeyError(f"no records for design {design!r}, regulariser {reg!r}")
    return recs


def tolerance(r: Mapping[str, Any]) -> float:
    """Sampling error of a semi-empirical comparison: test-set DKW bound plus the replicate noise."""
    return float(r["ks_tolerance"] + r["ks_replicates"])


def ks_ratio(m: Metrics, design: str, law: str, reduce=np.max) -> Measured:
    """KS distance of ``law`` (reduced over losses) over the comparison's tolerance, with the per-loss values."""
    recs = main_records(m, design)
    ratios = np.array([r[f"ks_{law}"] / tolerance(r) for r in recs], dtype=float)
    return Measured(float(reduce(ratios)), details={r["loss"]: float(x) for r, x in zip(recs, ratios)})


def universality_gap(m: Metrics, design: str) -> Measured:
    recs = main_records(m, design)
    gaps = np.array([abs(r["ks_gaussian"] - r["ks_convolution"]) / tolerance(r) for r in recs], dtype=float)
    return Measured(float(np.max(gaps)), details={r["loss"]: float(x) for r, x in zip(recs, gaps)})


def fixed_point_rate(m: Metrics) -> Measured:
    """Slope of log KS(fixed point, empirical) against log p, averaged over losses, per disjoint group of
    replicates; t interval over the groups."""
    sweep = m["fixed_point_sweep"]
    ps = np.array(sorted({r["p"] for r in sweep}), dtype=float)
    losses = sorted({r["loss"] for r in sweep})
    if ps.size < 2:
        raise ValueError("the p sweep needs at least two dimensions")
    ks = np.array(
        [[next(r["fold_ks"] for r in sweep if r["p"] == p and r["loss"] == loss) for p in ps] for loss in losses],
        dtype=float,
    )  # (loss, p, fold)
    design = np.stack([np.log(ps), np.ones_like(ps)], axis=1)
    per_group = np.linalg.lstsq(design, np.log(ks.transpose(1, 0, 2).reshape(ps.size, -1)), rcond=None)[0][0]
    slopes = per_group.reshape(len(losses), ks.shape[2]).mean(axis=0)  # one slope per replicate group
    out = seed_interval(slopes)
    interval = Interval(out.interval.low, out.interval.high, "t 95% over disjoint replicate groups", slopes.size)
    details = {"p": ps.tolist(), "slopes": slopes.tolist()}
    details["mean_ks"] = {loss: ks[i].mean(axis=1).tolist() for i, loss in enumerate(losses)}
    return Measured(out.value, interval, details)


def fixed_point_test_error_gap(m: Metrics) -> Measured:
    recs = [r for r in m["records"] if r["design"] == "mixture" and r["reg"] == "l2" and r["p"] == m["p_main"]]
    gaps = np.array([abs(r["test_error"] - r["test_error_fixed_point"]) for r in recs], dtype=float)
    return Measured(
        float(np.max(gaps) / m["test_error_tol"]),
        details={f"{r['loss']}@{r['ratio']:g}": [r["test_error"], r["test_error_fixed_point"]] for r in recs},
    )


def huber_gaps(m: Metrics, design: str) -> dict[str, float]:
    """Relative test-error gaps of the surrogate and of plain ridge to the pseudo-Huber fits."""
    huber = m["huber"]
    ph, sur = (main_records(m, design, reg)[0] for reg in ("pseudo_huber", "surrogate"))
    l2 = next(r for r in main_records(m, design) if r["loss"] == huber["loss"])
    return {
        "surrogate": abs(sur["test_error"] - ph["test_error"]) / ph["test_error"],
        "plain_l2": abs(l2["test_error"] - ph["test_error"]) / ph["test_error"],
    }


def surrogate_gap(m: Metrics) -> Measured:
    gaps = {d: huber_gaps(m, d) for d in m["huber"]["designs"]}
    worst = np.max(np.array([g["surrogate"] for g in gaps.values()], dtype=float))
    return Measured(float(worst / m["huber"]["rel_tol"]), details=gaps)


def gradient_term_matters(m: Metrics) -> Measured:
    g = huber_gaps(m, "localized")
    return Measured(float(g["plain_l2"] / g["surrogate"]), details=g)


def _ridge(m: Metrics, key: str) -> float:
    return float(m["ridge_check"][key])


LEARNING_CHECKS = [
    learning_check(
        learn_id(design),
        f"ridge-regularised logistic ERM ({design} design, largest p, main n/p)",
        "the class prior (majority sign of the training labels)",
        skill_of("model", section=("learning", design)),
        error="0/1 test error (mean over replicate fits, per test point)",
    )
    for design in DESIGNS
]

CLAIMS = [
    *LEARNING_CHECKS,
    ClaimSpec(
        "ridge_mean_exact",
        "check",
        "Ridge on a fixed design: Monte-Carlo mean of theta_hat equals (X^T X + lam n I)^{-1} X^T X theta* "
        "(Mahalanobis statistic / chi2_p 99.9% quantile <= 1): the pipeline against a closed form",
        Test("<=", 1.0),
        lambda m: _ridge(m, "mahalanobis") / _ridge(m, "chi2_999"),
    ),
    ClaimSpec(
        "ridge_cov_exact",
        "check",
        "Ridge on a fixed design: Monte-Carlo covariance equals sigma^2 A^{-1} X^T X A^{-1} / n^2 "
        "(Frobenius error / its expected Wishart size in [0.5, 1.5])",
        Test("between", low=0.5, high=1.5),
        lambda m: _ridge(m, "cov_error_ratio"),
    ),
    *[
        ClaimSpec(
            f"convolution_matches_{design}",
            "paper",
            f"{design}: law of theta_hat^T x = law of mu^T x convolved with N(0, tr(C E[xx^T])), mu and C "
            "estimated on held-out replicates (max KS over losses / (DKW + replicate noise) <= 1)",
            Test("<=", 1.0),
            lambda m, d=design: ks_ratio(m, d, "convolution"),
            rests_on=(learn_id(design),),
        )
        for design in ("mixture", "iid_t", "relu_features", "localized")
    ],
    ClaimSpec(
        "gaussian_fails_mixture",
        "paper",
        "mixture: the single-Gaussian (universality) prediction fails (min KS over losses / (DKW + replicate "
        "noise) > 1)",
        Test(">", 1.0),
        lambda m: ks_ratio(m, "mixture", "gaussian", np.min),
        rests_on=(learn_id("mixture"),),
    ),
    ClaimSpec(
        "gaussian_mixture_equivalent_fits_mixture",
        "paper",
        "mixture: the Gaussian-mixture equivalent (class means kept, held-out moments) fits (max KS over losses "
        "/ (DKW + replicate noise) <= 1)",
        Test("<=", 1.0),
        lambda m: ks_ratio(m, "mixture", "gaussian_mixture"),
        rests_on=(learn_id("mixture"),),
    ),
    ClaimSpec(
        "fixed_point_rate_mixture",
        "paper",
        "mixture: the KS distance between the fixed-point law (N(M,Q)+N(-M,Q))/2 and the empirical law falls as "
        f"p^{THEORY_RATE:g} (slope of log KS vs log p over the p sweep, mean over losses, within "
        f"{THEORY_RATE:g} +- {RATE_TOL:g}, whole t interval over replicate groups)",
        Test("within", THEORY_RATE, abs_tol=RATE_TOL),
        fixed_point_rate,
        rests_on=(learn_id("mixture"),),
    ),
    ClaimSpec(
        "fixed_point_test_error_mixture",
        "paper",
        "mixture: test error predicted by the fixed point at every n/p and loss (max absolute gap / "
        "test_error_tol <= 1)",
        Test("<=", 1.0),
        fixed_point_test_error_gap,
        rests_on=(learn_id("mixture"),),
    ),
    ClaimSpec(
        "gaussian_fails_localized",
        "paper",
        "localized non-Gaussian signal: the Gaussian-equivalent prediction fails (min KS over losses / (DKW + "
        "replicate noise) > 1)",
        Test(">", 1.0),
        lambda m: ks_ratio(m, "localized", "gaussian", np.min),
        rests_on=(learn_id("localized"),),
    ),
    *[
        ClaimSpec(
            f"universality_holds_{design}",
            "paper",
            f"{design} (delocalized teacher): Gaussian and convolution predictions agree (max |KS_gauss - KS_conv| "
            "over losses / (DKW + replicate noise) <= 1)",
            Test("<=", 1.0),
            lambda m, d=design: universality_gap(m, d),
            rests_on=(learn_id(design),),
        )
        for design in ("iid_t", "relu_features")
    ],
    ClaimSpec(
        "quadratic_surrogate_pseudo_huber",
        "paper",
        "pseudo-Huber regulariser vs its quadratic surrogate (Hessian at 0, gradient at mu): relative test-error "
        "gap / huber.rel_tol <= 1 (worst design)",
        Test("<=", 1.0),
        surrogate_gap,
        rests_on=(learn_id("mixture"), learn_id("localized")),
    ),
    ClaimSpec(
        "surrogate_gradient_term_matters_localized",
        "paper",
        "localized: the surrogate's gradient-at-mu term matters (test-error gap of plain ridge / gap of the "
        "surrogate > 1)",
        Test(">", 1.0),
        gradient_term_matters,
        rests_on=(learn_id("localized"),),
    ),
]
