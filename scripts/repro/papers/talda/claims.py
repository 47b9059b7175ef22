"""TALDA's claims as functions of the evaluate stage's metrics (see repro.reporting.claims)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from repro.papers.talda.methods import METHODS
from repro.reporting.claims import ClaimSpec, Test

BASELINES = tuple(m for m in METHODS if m != "talda")


def _speed_ratio(m: Mapping[str, Any], steps: str) -> float:
    """TALDA's convergence exponent at the weakest coupling over the best baseline's (same step policy); a NaN
    speed of any method propagates."""
    speeds = m["speed_at_weak_coupling"][steps]
    best = np.max(np.array([speeds[b] for b in BASELINES], dtype=float))
    return float(speeds["talda"] / best) if best > 0 else float("nan")


def _improvement(m: Mapping[str, Any], steps: str, against: tuple[str, ...]) -> float:
    """TALDA's speed-up factor from the strongest to the weakest coupling over the largest of ``against``'s (same
    step policy); a NaN factor of any method propagates."""
    improvement = m["improvement_weak_over_strong"][steps]
    best = np.max(np.array([improvement[b] for b in against], dtype=float))
    return float(improvement["talda"] / best) if best > 0 else float("nan")


CLAIMS = [
    ClaimSpec(
        "talda_lyapunov_monotone",
        "check",
        "TALDA's surrogate W never increases along its iterates (all problems, both step-size settings): largest "
        "relative one-step increase <= 0. Holds by construction: a step is accepted only if W decreases.",
        Test("<=", 0.0),
        lambda m: m["talda_max_relative_w_increase"],
        reported="lyapunov_descent",
    ),
    ClaimSpec(
        "talda_linear_convergence",
        "paper",
        "TALDA converges linearly on every two-sided PL family (quadratic games, robust least squares, Yang et al. "
        "example): smallest R^2 of the log-error fit > 0.99",
        Test(">", 0.99),
        lambda m: np.min(np.array(list(m["talda_min_r2"].values()), dtype=float)),
        reported="linear_convergence",
        rests_on=(),
    ),
    ClaimSpec(
        "talda_fastest_weak_coupling_tuned",
        "paper",
        "Headline, every method with best-of-grid step sizes from one common grid of absolute step sizes: at the "
        "weakest coupling TALDA's convergence exponent per oracle call / best baseline's > 1",
        Test(">", 1.0),
        lambda m: _speed_ratio(m, "tuned"),
        reported="weak_coupling",
        rests_on=(),
    ),
    ClaimSpec(
        "talda_tuned_rate_improves_as_coupling_vanishes",
        "paper",
        "Sharper for weakly coupled problems, with best-of-grid steps from the common grid: TALDA's speed-up factor "
        "from the strongest to the weakest coupling exceeds every baseline's (TALDA's factor / the largest baseline "
        "factor > 1)",
        Test(">", 1.0),
        lambda m: _improvement(m, "tuned", BASELINES),
        reported="coupling_dependence",
        rests_on=(),
    ),
    ClaimSpec(
        "talda_theory_steps_fastest_weak_coupling",
        "check",
        "Theory step sizes (each method its own theory step): at the weakest coupling TALDA's exponent per oracle "
        "call / best baseline's > 1. A property of the step formulas, not evidence for the paper: TALDA's theory "
        "x-step 1 / (L_xx + L_xy^2 / mu_y) tends to 1 / L_xx as L_xy -> 0, the baselines' stay at mu / L^2 or 1 / 4L",
        Test(">", 1.0),
        lambda m: _speed_ratio(m, "theory"),
        reported="weak_coupling",
    ),
    ClaimSpec(
        "talda_theory_steps_improve_as_coupling_vanishes",
        "check",
        "Theory steps: TALDA's speed-up from the strongest to the weakest coupling exceeds AGDA's (ratio of "
        "improvement factors > 1). Follows from the step formulas (TALDA's x-step grows as L_xy vanishes, AGDA's "
        "worst-case mu_y^2 / 18 L^3 does not), so a check of the implementation, not of the paper",
        Test(">", 1.0),
        lambda m: _improvement(m, "theory", ("agda",)),
        reported="coupling_dependence",
    ),
]
