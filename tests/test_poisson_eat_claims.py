"""poisson-eat's paper claims fail on counterfactual metrics (a rival relaxation's numbers in cubic EAT's place)."""

import copy

import numpy as np
import pytest

from repro.papers.poisson_eat.claims import CLAIMS
from repro.reporting.claims import verdict

RNG = np.random.default_rng(0)
REFERENCE = np.array([2.0, 2.0, 2.0, 2.0])


def batches(direction, noise=0.01):
    """20 batch means around ``direction`` (the cosine of their mean to REFERENCE is set by it)."""
    return (np.asarray(direction) + noise * RNG.standard_normal((20, 4))).tolist()


TRUE = np.abs(RNG.normal(0, 0.5, 169))
IMAGE_NOISE = RNG.normal(0, 3.0, 120)


def vae_entry(spread, mean_elbo):
    """Per-image test ELBOs at three temperatures (shared image effects) whose means span ``spread``, and the
    trivial mean-image model's ELBOs, about twice as poor."""
    offsets = np.array([spread / 2, 0.0, -spread / 2])
    per_image = mean_elbo + offsets[:, None] + IMAGE_NOISE[None, :] + 0.2 * RNG.standard_normal((3, 120))
    return {"test_elbo_per_image": per_image.tolist(), "trivial_elbo_per_image": (2 * mean_elbo + IMAGE_NOISE).tolist()}


def metrics():
    """Metrics shaped as the evaluate stage writes them, with cubic EAT ahead everywhere."""
    var_cells = [
        {"rate": r, "tau": t, "var_cubic": r * (1 - 9 * t / 35), "se_cubic": 0.002 * r}
        | {"var_sigmoid": r * (1 - 0.4 * t), "se_sigmoid": 0.002 * r}
        for r in (0.5, 2.0)
        for t in (0.1, 1.0)
    ]
    cos_cells = [
        {"function": f, "tau": t, "reference": REFERENCE.tolist()}
        | {"eat_cubic": batches([2.0, 2.0, 2.0, 1.9]), "eat_sigmoid": batches([2.0, 1.5, 1.0, 0.5])}
        for f in ("square", "exp_neg")
        for t in (0.5, 1.0)
    ]
    return {
        "fidelity": {
            "max_abs_z_mean_cubic_vs_rate": 1.0,
            "max_abs_z_mean_sigmoid_vs_closed": 1.0,
            "min_z_mean_sigmoid_vs_rate_at_tau": 10.0,
            "max_abs_z_var_vs_closed": 1.0,
            "variance_bias": var_cells,
            "w1_mean_at_tau": {"eat_cubic": 0.1, "eat_sigmoid": 0.2, "gsm": 0.3},
            "negative_binomial_max_abs_z_mean_cubic": 1.0,
        },
        "gradients": {"cosine_cells": cos_cells},
        "vae": {
            m: vae_entry(s, e) for m, s, e in (("eat_sigmoid", 3.0, -60), ("eat_cubic", 1.0, -50), ("gsm", 6.0, -70))
        },
        "poglm": {
            m: {"corr_full": c, "exact_elbo": e, "corr_observed": 0.9}
            | {"coupling_sq_error": (0.3 * TRUE**2).tolist(), "coupling_sq_error_at_init": TRUE.tolist()}
            for m, c, e in (("eat_sigmoid", 0.4, -11.0), ("eat_cubic", 0.5, -10.0), ("gsm", 0.3, -12.0))
        },
    }


def swap(m, group, a, b):
    """``m`` with the entries of methods ``a`` and ``b`` of ``m[group]`` exchanged."""
    out = copy.deepcopy(m)
    out[group][a], out[group][b] = out[group][b], out[group][a]
    return out


def test_every_claim_passes_on_metrics_that_support_it():
    assert [c.id for c in CLAIMS if verdict(CLAIMS, c.id, metrics()) != "pass"] == []


def test_sigmoid_variance_in_cubic_place_fails_the_check():
    m = metrics()
    for c in m["fidelity"]["variance_bias"]:
        c["var_cubic"], c["var_sigmoid"] = c["var_sigmoid"], c["var_cubic"]
    assert verdict(CLAIMS, "cubic_reduces_variance_bias", m) == "fails"


def test_variance_bias_too_noisy_to_separate_fails():
    m = metrics()
    for c in m["fidelity"]["variance_bias"]:
        c["se_cubic"] = c["se_sigmoid"] = 0.2 * c["rate"]
    assert verdict(CLAIMS, "cubic_reduces_variance_bias", m) == "fails"


@pytest.mark.counterfactual("poisson-eat", "w1_cubic_lowest")
def test_gsm_fidelity_in_cubic_place_fails():
    m = metrics()
    m["fidelity"]["w1_mean_at_tau"] |= {"eat_cubic": 0.3, "gsm": 0.1}
    assert verdict(CLAIMS, "w1_cubic_lowest", m) == "fails"


@pytest.mark.counterfactual("poisson-eat", "gradient_cosine_cubic")
def test_sigmoid_gradients_in_cubic_place_fail():
    m = metrics()
    for c in m["gradients"]["cosine_cells"]:
        c["eat_cubic"], c["eat_sigmoid"] = c["eat_sigmoid"], c["eat_cubic"]
    assert verdict(CLAIMS, "gradient_cosine_cubic", m) == "fails"


def test_cosine_gap_inside_the_monte_carlo_noise_fails():
    m = metrics()
    for c in m["gradients"]["cosine_cells"]:
        c["eat_cubic"] = batches([2.0, 2.0, 2.0, 1.9], noise=2.0)
        c["eat_sigmoid"] = batches([2.0, 2.0, 2.0, 1.8], noise=2.0)
    assert verdict(CLAIMS, "gradient_cosine_cubic", m) == "fails"


@pytest.mark.counterfactual("poisson-eat", "vae_tau_robustness")
def test_sigmoid_vae_in_cubic_place_fails_robustness():
    assert verdict(CLAIMS, "vae_tau_robustness", swap(metrics(), "vae", "eat_cubic", "eat_sigmoid")) == "fails"


@pytest.mark.counterfactual("poisson-eat", "vae_elbo_vs_gsm")
def test_gsm_vae_in_cubic_place_fails_elbo():
    assert verdict(CLAIMS, "vae_elbo_vs_gsm", swap(metrics(), "vae", "eat_cubic", "gsm")) == "fails"


@pytest.mark.counterfactual("poisson-eat", "poglm_coupling_recovery")
@pytest.mark.counterfactual("poisson-eat", "poglm_elbo")
@pytest.mark.parametrize("claim", ["poglm_coupling_recovery", "poglm_elbo"])
def test_sigmoid_poglm_in_cubic_place_fails(claim):
    assert verdict(CLAIMS, claim, swap(metrics(), "poglm", "eat_cubic", "eat_sigmoid")) == "fails"


def test_a_vae_no_better_than_the_mean_image_makes_the_vae_claims_inconclusive():
    m = metrics()
    v = m["vae"]["gsm"]
    v["test_elbo_per_image"] = [v["trivial_elbo_per_image"]] * 3
    assert verdict(CLAIMS, "vae_learned_gsm", m) == "fails"
    assert verdict(CLAIMS, "vae_elbo_vs_gsm", m) == "inconclusive"
    assert verdict(CLAIMS, "vae_tau_robustness", m) == "inconclusive"
    assert verdict(CLAIMS, "w1_cubic_lowest", m) == "pass"


def test_a_poglm_no_better_than_its_initialisation_fails_its_learning_check():
    m = metrics()
    p = m["poglm"]["eat_cubic"]
    p["coupling_sq_error"] = p["coupling_sq_error_at_init"]
    assert verdict(CLAIMS, "poglm_learned_eat_cubic", m) == "fails"
    assert verdict(CLAIMS, "poglm_elbo", m) == "inconclusive"


def test_spread_difference_inside_the_image_noise_fails():
    m = metrics()
    m["vae"]["eat_cubic"] = vae_entry(2.9, -50)
    m["vae"]["eat_sigmoid"] = vae_entry(3.0, -60)
    for k in ("eat_cubic", "eat_sigmoid"):
        m["vae"][k]["test_elbo_per_image"] = (
            np.asarray(m["vae"][k]["test_elbo_per_image"]) + 5 * RNG.standard_normal((3, 120))
        ).tolist()
    assert verdict(CLAIMS, "vae_tau_robustness", m) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    m = metrics()
    m["fidelity"]["variance_bias"][0]["var_cubic"] = float("nan")
    del m["gradients"]["cosine_cells"]
    assert verdict(CLAIMS, "cubic_reduces_variance_bias", m) == "fails"
    assert verdict(CLAIMS, "gradient_cosine_cubic", m) == "fails"
