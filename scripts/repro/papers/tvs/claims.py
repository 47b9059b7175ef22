"""TVS's claims as functions of the evaluate stage's metrics (see repro.reporting.claims).

Correlations and AUROCs carry percentile bootstrap intervals over clips (a claim passes only when the whole
interval clears its threshold). The tracking controllers are PD stand-ins for the paper's RL policies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.metrics.regression import spearman
from repro.papers.tvs.flaws import auroc
from repro.reporting.claims import ClaimSpec, Measured, Test, bootstrap_interval

DIRECT_PROXIES = ("speed", "acceleration", "jerk")


def rank_correlation(m: Mapping[str, Any], policy: str) -> Measured:
    tvs = np.asarray(m["tvs"], dtype=float)
    err = np.asarray(m["policies"][policy]["mpjpe_mm"], dtype=float)
    return bootstrap_interval([tvs, err], spearman, paired=True)


def margin_over_proxies(m: Mapping[str, Any]) -> Measured:
    """Spearman of TVS with the primary policy's MPJPE minus the best direct proxy's, bootstrapped over clips."""
    tvs = np.asarray(m["tvs"], dtype=float)
    err = np.asarray(m["policies"][m["primary_policy"]]["mpjpe_mm"], dtype=float)
    prox = [np.asarray(m["proxies"][p], dtype=float) for p in DIRECT_PROXIES]

    def stat(t, e, *ps):
        return spearman(t, e) - np.max(np.array([spearman(p, e) for p in ps]))

    return bootstrap_interval([tvs, err, *prox], stat, paired=True, n_resamples=500)


def dsje_monotone(m: Mapping[str, Any]) -> float:
    """Smallest step of DSJE between consecutive TVS bins, over both policies (>= 0: non-decreasing)."""
    steps = [np.diff(np.asarray(p["dsje"]["all"], dtype=float)) for p in m["policies"].values()]
    return float(np.min(np.concatenate(steps)))


def flaw_auroc(m: Mapping[str, Any]) -> Measured:
    seg = m["flaw_segments"]
    clip = np.asarray(seg["clip"])
    label, score = np.asarray(seg["label"], dtype=bool), np.asarray(seg["tvs"], dtype=float)

    def stat(idx):
        rows = np.concatenate([np.flatnonzero(clip == int(i)) for i in idx])
        return auroc(label[rows], score[rows])

    value = auroc(label, score)
    boot = bootstrap_interval(np.unique(clip).astype(float), stat, n_resamples=500)
    return Measured(value, boot.interval)


CLAIMS = [
    ClaimSpec(
        "tvs_zero_perturbation",
        "check",
        "Exact: the unperturbed torque difference is exactly 0 (largest absolute value)",
        Test("<=", 0.0),
        lambda m: m["checks"]["zero_perturbation_max_abs"],
        reported="policy_independent",
    ),
    ClaimSpec(
        "tvs_eps_stable",
        "check",
        "Consistency: the frame score at eps and at eps/2 along the same directions agree within 5% (hardest clip)",
        Test("<=", 0.05),
        lambda m: m["checks"]["eps_half_rel_diff"],
        reported="policy_independent",
    ),
    ClaimSpec(
        "tvs_matches_jacobian",
        "check",
        "Consistency: the finite-difference frame score matches the one from mjd_inverseFD's Jacobian within 5%",
        Test("<=", 0.05),
        lambda m: m["checks"]["jacobian_rel_diff"],
        reported="policy_independent",
    ),
    ClaimSpec(
        "tvs_correlates_strong_policy",
        "paper",
        "Spearman rho(TVS, MPJPE) > 0 over the generated clips for the stiff PD tracker (stand-in for UHC/PHC+; "
        "a PD tracker's error is not the paper's RL-policy claim)",
        Test(">", 0.0),
        lambda m: rank_correlation(m, "strong"),
        reported="correlation",
        rests_on=(),
    ),
    ClaimSpec(
        "tvs_correlates_weak_policy",
        "paper",
        "Spearman rho(TVS, MPJPE) > 0 for the soft, torque-limited PD tracker (a second policy)",
        Test(">", 0.0),
        lambda m: rank_correlation(m, "weak"),
        reported="correlation",
        rests_on=(),
    ),
    ClaimSpec(
        "tvs_beats_proxies",
        "paper",
        "TVS ranks tracking error better than the direct difficulty proxies (mean joint speed, acceleration, "
        "jerk): Spearman of TVS minus the best proxy's > 0 (primary policy)",
        Test(">", 0.0),
        margin_over_proxies,
        reported="correlation",
        rests_on=(),
    ),
    ClaimSpec(
        "tvs_dsje_monotone",
        "paper",
        "DSJE (mean body error per TVS tercile) is non-decreasing across terciles for both trackers",
        Test(">=", 0.0),
        dsje_monotone,
        reported="applications",
        rests_on=(),
    ),
    ClaimSpec(
        "tvs_flaw_detection",
        "paper",
        "Flawed segments (teleports, sign flips, jitter injected into generated motions) get higher TVS: segment "
        "AUROC > 0.5",
        Test(">", 0.5),
        flaw_auroc,
        reported="applications",
        rests_on=(),
    ),
    ClaimSpec(
        "tvs_flaw_detection_target",
        "paper",
        "Flawed-segment detection reaches the brief's target: segment AUROC of TVS >= 0.8 (point estimate)",
        Test(">=", 0.8),
        lambda m: m["flaw_auroc"]["tvs"],
        reported="applications",
        rests_on=(),
    ),
]
