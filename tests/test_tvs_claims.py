"""TVS's paper claims fail on counterfactual metrics (shuffled pairings, a proxy that ranks better, flat DSJE,
uninformative flaw scores)."""

import copy

import numpy as np
import pytest

from repro.papers.tvs.claims import CLAIMS
from repro.reporting.claims import verdict

N = 20


def metrics() -> dict:
    rng = np.random.default_rng(0)
    tvs = np.linspace(1, 3, N)
    err = 10 * tvs**2 + rng.normal(0, 1, N)
    noisy = tvs + rng.normal(0, 1.0, N)
    clip = np.repeat(np.arange(N), 5)
    label = np.zeros(5 * N, bool)
    label[::7] = True
    score = label * 2.0 + rng.normal(0, 0.3, 5 * N)
    return {
        "tvs": tvs.tolist(),
        "proxies": {"speed": noisy.tolist(), "acceleration": (noisy + 0.1).tolist(), "jerk": noisy[::-1].tolist()},
        "policies": {
            "strong": {"mpjpe_mm": err.tolist(), "dsje": {"all": [1.0, 2.0, 5.0]}},
            "weak": {"mpjpe_mm": (2 * err).tolist(), "dsje": {"all": [3.0, 4.0, 9.0]}},
        },
        "primary_policy": "strong",
        "flaw_segments": {"clip": clip.tolist(), "label": label.tolist(), "tvs": score.tolist()},
        "flaw_auroc": {"tvs": 0.95},
        "checks": {"zero_perturbation_max_abs": 0.0, "eps_half_rel_diff": 0.01, "jacobian_rel_diff": 0.01},
    }


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("tvs", "tvs_correlates_strong_policy")
def test_shuffled_errors_fail_the_strong_policy_correlation():
    m = metrics()
    m["policies"]["strong"]["mpjpe_mm"] = list(
        np.random.default_rng(1).permutation(m["policies"]["strong"]["mpjpe_mm"])
    )
    assert verdict(CLAIMS, "tvs_correlates_strong_policy", m) == "fails"


@pytest.mark.counterfactual("tvs", "tvs_correlates_weak_policy")
def test_reversed_errors_fail_the_weak_policy_correlation():
    m = metrics()
    m["policies"]["weak"]["mpjpe_mm"] = m["policies"]["weak"]["mpjpe_mm"][::-1]
    assert verdict(CLAIMS, "tvs_correlates_weak_policy", m) == "fails"


@pytest.mark.counterfactual("tvs", "tvs_beats_proxies")
def test_a_proxy_equal_to_tvs_fails_the_margin():
    m = metrics()
    m["proxies"]["acceleration"] = copy.copy(m["tvs"])
    assert verdict(CLAIMS, "tvs_beats_proxies", m) == "fails"


@pytest.mark.counterfactual("tvs", "tvs_dsje_monotone")
def test_decreasing_dsje_fails():
    m = metrics()
    m["policies"]["weak"]["dsje"]["all"] = [3.0, 2.0, 9.0]
    assert verdict(CLAIMS, "tvs_dsje_monotone", m) == "fails"


@pytest.mark.counterfactual("tvs", "tvs_flaw_detection")
def test_scores_unrelated_to_flaws_fail_detection():
    m = metrics()
    m["flaw_segments"]["tvs"] = list(np.random.default_rng(2).normal(size=5 * N))
    assert verdict(CLAIMS, "tvs_flaw_detection", m) == "fails"


@pytest.mark.counterfactual("tvs", "tvs_flaw_detection_target")
def test_weak_detector_misses_the_target():
    m = metrics()
    m["flaw_auroc"]["tvs"] = 0.7
    assert verdict(CLAIMS, "tvs_flaw_detection_target", m) == "fails"


def test_failed_consistency_checks_fail():
    m = metrics()
    m["checks"] = {"zero_perturbation_max_abs": 1e-9, "eps_half_rel_diff": 0.2, "jacobian_rel_diff": float("nan")}
    assert all(
        verdict(CLAIMS, c, m) == "fails" for c in ("tvs_zero_perturbation", "tvs_eps_stable", "tvs_matches_jacobian")
    )
