"""SurvFD's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.reporting.claims import ClaimSpec, Measured, Test, learning_check, seed_interval, skill_of

EXACT = 1e-10


def _max_local_accuracy(m: Mapping[str, Any], group: str) -> float:
    return float(np.max(list(m["local_accuracy"][group].values())))


def _ground_truth_accuracy(target: str, label: str, reported: str | None) -> ClaimSpec:
    """Local accuracy of the exact explanation of one ground-truth target (efficiency holds by construction)."""
    return ClaimSpec(
        f"survfd_local_accuracy_{target}",
        "check",
        f"Exact SurvSHAP-IQ (k-SII, order 2) on the ground-truth {label} of every scenario and seed: "
        "max |sum phi_S(x, t) - (f(x, t) - nu_t(empty))| <= 1e-10",
        Test("<=", EXACT),
        lambda m: m["local_accuracy"]["ground_truth"][target],
        reported=reported,
    )


def _share_gain(m: Mapping[str, Any]) -> Measured:
    """Interaction mass order-1 SurvSHAP(t) leaves out of the fitted GBSA's survival: fitted to the interaction
    scenario minus fitted to the additive one, paired by seed."""
    share = m["fitted_interaction_share"]["gbsa"]
    out = seed_interval(np.asarray(share["interaction"], dtype=float) - np.asarray(share["additive"], dtype=float))
    out.details |= {"interaction": share["interaction"], "additive": share["additive"]}
    return out


LEARNING_ERROR = (
    "Brier score on an uncensored held-out cohort, in excess of the true survival function's (the irreducible "
    "part, which dominates the Brier score of any model)"
)

CLAIMS = [
    learning_check(
        "learn_gbsa",
        "the gradient-boosted survival model (sksurv GBSA) fitted to each simulated cohort",
        "the training cohort's Kaplan-Meier curve (no covariates)",
        skill_of("gbsa"),
        error=LEARNING_ERROR,
    ),
    learning_check(
        "learn_coxph",
        "the Cox model (sksurv CoxPH) fitted to each simulated cohort",
        "the training cohort's Kaplan-Meier curve (no covariates)",
        skill_of("coxph"),
        error=LEARNING_ERROR,
    ),
    _ground_truth_accuracy("log_hazard", "log-hazard", "local_accuracy_error_log_hazard_ground_truth"),
    _ground_truth_accuracy("hazard", "hazard", None),
    _ground_truth_accuracy("survival", "survival function", "local_accuracy_error_survival_ground_truth"),
    ClaimSpec(
        "survfd_local_accuracy_fitted",
        "check",
        "Exact SurvSHAP-IQ on predicted survival of the fitted sksurv models (simulated and real cohorts): "
        "local-accuracy error <= 1e-10",
        Test("<=", EXACT),
        lambda m: _max_local_accuracy(m, "fitted"),
        reported="local_accuracy_error_survival_fitted_coxph_gbsa",
    ),
    ClaimSpec(
        "survfd_closed_form_interaction",
        "check",
        "Log-hazard with gamma x1 x2: phi_12(t) is constant in t and equals gamma[(x1 - b1)(x2 - b2) + cov_B(x1, x2)] "
        "under background B (max abs deviation over scenarios, seeds, points, times <= 1e-10)",
        Test("<=", EXACT),
        lambda m: m["closed_form"]["interaction_max_error"],
    ),
    ClaimSpec(
        "survfd_closed_form_main_effect",
        "check",
        "Log-hazard with delta x3 log t: x3's main effect is (beta3 + delta log t)(x3 - b3) (max abs deviation <= 1e-10)",
        Test("<=", EXACT),
        lambda m: m["closed_form"]["main_effect_max_error"],
    ),
    ClaimSpec(
        "survfd_truth_survival_interaction_time_dependent",
        "check",
        "By construction (closed-form truth): interaction scenario, gamma x1 x2 under proportional hazards, the "
        "true survival function's phi_12(t) varies with t although it is constant on the log-hazard; mean relative "
        "range (max_t - min_t) / max_t |phi_12| over explained points > 0.1, t interval over simulation seeds",
        Test(">", 0.1),
        lambda m: seed_interval(m["time_variation"]["survival"]),
    ),
    ClaimSpec(
        "survfd_truth_additive_misses_mass",
        "check",
        "By construction (closed-form truth): additive log-hazard scenario, the true survival function still "
        "carries interaction mass; share of Moebius mass in orders >= 2 > 0.01, t interval over seeds",
        Test(">", 0.01),
        lambda m: seed_interval(m["interaction_share"]["survival"]),
    ),
    ClaimSpec(
        "survfd_fitted_survival_interaction_time_dependent",
        "paper",
        "SurvSHAP-IQ of the GBSA fitted to the interaction scenario (a proportional-hazards model learned from the "
        "data): its survival phi_12(t) varies with t; mean relative range over explained points > 0.1, t interval "
        "over seeds",
        Test(">", 0.1),
        lambda m: seed_interval(m["fitted_time_variation"]["gbsa"]),
        rests_on=("learn_gbsa",),
    ),
    ClaimSpec(
        "survfd_order1_misses_fitted_interaction",
        "paper",
        "Order-1 SurvSHAP(t) against the fitted interaction model: the share of the GBSA's survival (Moebius mass in "
        "orders >= 2) that an additive explanation leaves out is larger when the GBSA is fitted to the interaction "
        "scenario than when fitted to the additive one (difference, paired by seed, t interval > 0)",
        Test(">", 0.0),
        _share_gain,
        rests_on=("learn_gbsa",),
    ),
    ClaimSpec(
        "survfd_fitted_gbsa_recovers_interaction",
        "paper",
        "SurvSHAP-IQ phi_12(t) of a gradient-boosted survival model (sksurv GBSA, 50 depth-2 trees: a small-scale "
        "stand-in) fitted to the interaction scenario correlates with the true phi_12(t) over t: mean Pearson r over "
        "explained points > 0.8, t interval over seeds",
        Test(">", 0.8),
        lambda m: seed_interval(m["curve_correlation"]["gbsa"]),
        rests_on=("learn_gbsa",),
    ),
]
