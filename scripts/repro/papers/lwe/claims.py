"""LWE attack claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import (
    ClaimSpec,
    Interval,
    Measured,
    Test,
    bootstrap_interval,
    learning_check,
    skill_of,
)

LEARNED = ("learn_distinguisher",)


def _fitted(m: Mapping[str, Any], name: str) -> Measured:
    fit = m["power_law"][name]
    return Measured(fit["value"], Interval(fit["low"], fit["high"], "percentile bootstrap 95% over secrets", fit["n"]))


def _success(m: Mapping[str, Any], method: str) -> Measured:
    return bootstrap_interval(np.asarray(m["cool_recovery"][method], dtype=float), np.mean)


def _stepwise_gain(m: Mapping[str, Any]) -> Measured:
    rows = m["cool_recovery"]
    return bootstrap_interval(
        (np.asarray(rows["stepwise"], dtype=float), np.asarray(rows["per_column"], dtype=float)),
        lambda a, b: np.mean(a) - np.mean(b),
        paired=True,
    )


def _model_gain(m: Mapping[str, Any]) -> Measured:
    fit = m["power_law"]
    return bootstrap_interval(
        (
            np.asarray(fit["log_attempts_exhaustive"], dtype=float),
            np.asarray(fit["log_attempts_model_best"], dtype=float),
        ),
        lambda a, b: np.mean(a) - np.mean(b),
        paired=True,
    )


CLAIMS = [
    ClaimSpec(
        "lwe_generator_identity",
        "check",
        "Generator identity: b - A s = e (mod q) exactly with |e| <= 6 sigma (largest mismatch 0 and max |e| / sigma <= 6)",
        Test("<=", 0.0),
        lambda m: m["identities"]["generator_max_mismatch"] + float(m["identities"]["error_max_over_sigma"] > 6.0),
    ),
    ClaimSpec(
        "lwe_reduction_identity",
        "check",
        "Reduction identity: R A_sub = R_A and R b_sub = R_b (mod q) on the reduced samples (largest mismatch 0)",
        Test("<=", 0.0),
        lambda m: m["identities"]["reduction_max_mismatch"],
        scales=("smoke",),
    ),
    ClaimSpec(
        "lwe_reduced_error_width",
        "check",
        "Reduced error width: std of centre(R b - R A s) / (sigma * rms ||R||) within 20% of 1",
        Test("within", 1.0, abs_tol=0.2),
        lambda m: m["identities"]["reduced_error_std_ratio"],
        scales=("smoke",),
    ),
    learning_check(
        "learn_distinguisher",
        "the MLP distinguisher at the largest (N, r) of the grid",
        "a random ranking of the cruel coordinates (the exhaustive search's order)",
        skill_of("model"),
        error="mean rank of a secret's true cruel bits among the cruel coordinates (0 = first), per secret",
    ),
    ClaimSpec(
        "lwe_cruel_cool_profile",
        "check",
        "Cruel/cool profile of the embedded default (by construction: the weak LLL, delta 0.7 at n = 40, is "
        "chosen to leave the incomplete reduction that BKZ leaves at n >= 256): Spearman rank correlation of "
        "column std with column index < -0.5",
        Test("<", -0.5),
        lambda m: m["column_spearman"],
        scales=("smoke",),
    ),
    ClaimSpec(
        "lwe_cruel_cool_split",
        "paper",
        "Cruel/cool split of the published BKZ-reduced samples: the std of the reduced columns decreases along "
        "the columns (Spearman rank correlation of column std with column index < -0.5)",
        Test("<", -0.5),
        lambda m: m["column_spearman"],
        scales=("full",),
        rests_on=(),
    ),
    ClaimSpec(
        "lwe_stepwise_recovers_cool_bits",
        "paper",
        "Given the true cruel bits, forward stepwise regression recovers every cool bit for >= 90% of secrets "
        "(bootstrap interval over secrets)",
        Test(">=", 0.9),
        lambda m: _success(m, "stepwise"),
        rests_on=(),
    ),
    ClaimSpec(
        "lwe_stepwise_beats_per_column",
        "paper",
        "Stepwise regression recovers all cool bits more often than the one-shot per-column test at the same alpha "
        "(success-rate difference > 0, paired bootstrap over secrets)",
        Test(">", 0.0),
        _stepwise_gain,
        rests_on=(),
    ),
    ClaimSpec(
        "lwe_attempts_fall_with_dataset_size",
        "paper",
        "Power law log(attempts) = a + b log N + c log r of the MLP distinguisher (a small-scale stand-in for the "
        "paper's transformer): fitted b < 0 (bootstrap interval over secrets)",
        Test("<", 0.0),
        lambda m: _fitted(m, "slope_log_n"),
        rests_on=LEARNED,
    ),
    ClaimSpec(
        "lwe_attempts_fall_with_repetition",
        "paper",
        "Repetition at a fixed training budget: among grid points with the same number of examples seen N r, "
        "fewer examples repeated more often need fewer attempts (slope of log attempts on log r within each "
        "budget, one intercept per budget, < 0; bootstrap interval over secrets), so that repetition is not "
        "confounded with extra epochs",
        Test("<", 0.0),
        lambda m: _fitted(m, "slope_log_r_fixed_budget"),
        rests_on=LEARNED,
    ),
    ClaimSpec(
        "lwe_model_beats_exhaustive",
        "paper",
        "At the largest N and r the model-ranked search needs fewer attempts than exhaustive search over the cruel "
        "supports (mean log-attempt saving > 0, paired bootstrap over secrets)",
        Test(">", 0.0),
        _model_gain,
        rests_on=LEARNED,
    ),
    ClaimSpec(
        "lwe_highest_weight_recovered_n256",
        "paper",
        "Full scale, n = 256, log2 q = 20 binary secrets: the highest Hamming weight fully recovered (cruel bits "
        "within the attempt budget, cool bits by stepwise regression, verified) is within 5 of the paper's 70",
        Test("within", 70.0, abs_tol=5.0),
        lambda m: m["recovered"]["highest_h"],
        reported="max_hamming_weight_recovered_n256_logq20",
        scales=("full",),
        rests_on=LEARNED,
    ),
]
