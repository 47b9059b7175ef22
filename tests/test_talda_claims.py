"""TALDA's paper claims fail on counterfactual metrics (a baseline's numbers in TALDA's place)."""

import pytest

from repro.papers.talda.claims import CLAIMS
from repro.reporting.claims import verdict


def metrics(**override):
    """Metrics shaped as the evaluate stage writes them, with TALDA ahead everywhere."""
    base = {
        "talda_max_relative_w_increase": 0.0,
        "talda_min_r2": {"quadratic": 0.999, "robust_ls": 0.998, "yang": 0.995},
        "speed_at_weak_coupling": {
            "theory": {"talda": 2.0, "gda": 1.0, "agda": 1.0, "eg": 0.5, "ogda": 0.5},
            "tuned": {"talda": 2.0, "gda": 1.5, "agda": 1.2, "eg": 0.5, "ogda": 0.5},
        },
        "improvement_weak_over_strong": {
            "theory": {"talda": 10.0, "gda": 1.0, "agda": 2.0, "eg": 1.5, "ogda": 1.5},
            "tuned": {"talda": 10.0, "gda": 5.0, "agda": 1.0, "eg": 2.0, "ogda": 3.0},
        },
    }
    return base | override


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("talda", "talda_linear_convergence")
def test_sublinear_family_fails_linear_convergence():
    assert (
        verdict(CLAIMS, "talda_linear_convergence", metrics(talda_min_r2={"quadratic": 0.999, "yang": 0.8})) == "fails"
    )


@pytest.mark.counterfactual("talda", "talda_fastest_weak_coupling_tuned")
def test_baseline_as_fast_as_talda_with_tuned_steps_fails():
    speeds = metrics()["speed_at_weak_coupling"] | {
        "tuned": {"talda": 1.5, "gda": 1.5, "agda": 1.2, "eg": 1, "ogda": 1}
    }
    assert verdict(CLAIMS, "talda_fastest_weak_coupling_tuned", metrics(speed_at_weak_coupling=speeds)) == "fails"


@pytest.mark.counterfactual("talda", "talda_tuned_rate_improves_as_coupling_vanishes")
def test_a_baseline_improving_as_much_with_tuned_steps_fails():
    improvement = metrics()["improvement_weak_over_strong"]
    improvement["tuned"] = improvement["tuned"] | {"gda": 10.0}
    claim = "talda_tuned_rate_improves_as_coupling_vanishes"
    assert verdict(CLAIMS, claim, metrics(improvement_weak_over_strong=improvement)) == "fails"


def test_theory_step_checks_fail_when_a_baseline_is_as_fast():
    speeds = metrics()["speed_at_weak_coupling"] | {
        "theory": {"talda": 1.0, "gda": 1.0, "agda": 3.0, "eg": 1, "ogda": 1}
    }
    assert (
        verdict(CLAIMS, "talda_theory_steps_fastest_weak_coupling", metrics(speed_at_weak_coupling=speeds)) == "fails"
    )
    improvement = metrics()["improvement_weak_over_strong"]
    improvement["theory"] = improvement["theory"] | {"agda": 10.0}
    claim = "talda_theory_steps_improve_as_coupling_vanishes"
    assert verdict(CLAIMS, claim, metrics(improvement_weak_over_strong=improvement)) == "fails"


def test_theory_step_claims_are_checks_not_paper_claims():
    kinds = {c.id: c.kind for c in CLAIMS}
    assert kinds["talda_theory_steps_fastest_weak_coupling"] == "check"
    assert kinds["talda_theory_steps_improve_as_coupling_vanishes"] == "check"
    assert all(c.rests_on == () for c in CLAIMS if c.kind == "paper")


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    broken = metrics(talda_min_r2={"quadratic": float("nan")})
    del broken["speed_at_weak_coupling"]
    assert verdict(CLAIMS, "talda_linear_convergence", broken) == "fails"
    assert verdict(CLAIMS, "talda_fastest_weak_coupling_tuned", broken) == "fails"


def test_missing_fit_stays_nan_while_divergence_counts_as_zero():
    import math

    from repro.papers.talda import evaluate

    assert math.isnan(evaluate.speed(float("nan")))
    assert evaluate.speed(float("inf")) == 0.0 and evaluate.speed(-0.5) == 0.5
    assert math.isnan(evaluate.ratio(1.0, 0.0)) and math.isnan(evaluate.ratio(float("nan"), 1.0))
    speeds = metrics()["speed_at_weak_coupling"]
    speeds["tuned"]["gda"] = float("nan")
    assert verdict(CLAIMS, "talda_fastest_weak_coupling_tuned", metrics(speed_at_weak_coupling=speeds)) == "fails"


def test_tuned_grid_is_the_same_absolute_grid_for_every_method():
    import numpy as np

    from repro.papers.talda.methods import METHODS, theory_steps
    from repro.papers.talda.optimize import grid_steps

    k = {n: np.array([v]) for n, v in dict(l=4.0, l_xx=1.0, l_yy=2.0, l_xy=3.0, mu_x=0.2, mu_y=0.3).items()}
    for method in METHODS:
        ex, ey = grid_steps(method, k, 0.5)
        tx, ty = theory_steps(method, k)
        assert np.maximum(ex, ey) == pytest.approx(0.5 / 4.0)
        assert ex / ey == pytest.approx(tx / ty)
