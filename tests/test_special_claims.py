"""SPECIAL's paper claims fail on counterfactual metrics (FedAvg's numbers in SPECIAL's place, flat sweeps)."""

import copy

import pytest

from repro.papers.special.claims import CLAIMS
from repro.reporting.claims import verdict


def metrics():
    """Metrics shaped as the evaluate stage writes them, with SPECIAL ahead everywhere."""
    final = {"final_accuracy": [0.6, 0.61, 0.62]}
    methods = {
        "fedavg": {"bwt": [-0.2, -0.25, -0.22], "plasticity": [0.7, 0.72, 0.71]} | final,
        "special_mu0": {"bwt": [-0.2, -0.25, -0.22], "plasticity": [0.7, 0.72, 0.71]} | final,
        "special_mu1": {"bwt": [-0.1, -0.14, -0.12], "plasticity": [0.65, 0.66, 0.66]} | final,
        "special_mu3": {"bwt": [-0.02, -0.05, -0.03], "plasticity": [0.5, 0.52, 0.51]} | final,
    }
    sweep = {"values": [2, 5, 10], "special": [[-0.3, -0.32, -0.31], [-0.2, -0.21, -0.22], [-0.1, -0.12, -0.11]]}
    return {
        "learning": learned(),
        "methods": methods,
        "main_method": "special_mu1",
        "mu_values": [0.0, 1.0, 3.0],
        "mu_names": ["special_mu0", "special_mu1", "special_mu3"],
        "mu0_max_abs_difference_from_fedavg": 0.0,
        "max_segment_residual": 1e-7,
        "sweeps": {k: copy.deepcopy(sweep) for k in ("per_round", "rounds", "local_epochs")},
    }


def learned(error=0.3, n=200):
    """Per-item errors right after each task of models that learned (30 %) and of the class prior (90 %)."""
    model = [1.0] * int(error * n) + [0.0] * (n - int(error * n))
    names = ("fedavg", "special_mu1", "sweep_per_round", "sweep_rounds", "sweep_local_epochs")
    return {"trivial": [1.0] * (9 * n // 10) + [0.0] * (n // 10)} | {k: model for k in names}


def test_every_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS)


@pytest.mark.counterfactual("special", "special_bwt_above_fedavg")
def test_fedavg_numbers_in_special_place_fail():
    m = metrics()
    m["methods"]["special_mu1"] = m["methods"]["fedavg"]
    assert verdict(CLAIMS, "special_bwt_above_fedavg", m) == "fails"


@pytest.mark.counterfactual("special", "special_bwt_above_fedavg")
def test_retention_bought_with_final_accuracy_fails():
    """The guard: SPECIAL forgets less but ends significantly below FedAvg's final accuracy."""
    m = metrics()
    m["methods"]["special_mu1"]["final_accuracy"] = [0.55, 0.56, 0.56]
    assert verdict(CLAIMS, "special_bwt_above_fedavg", m) == "fails"


def test_a_sweep_model_that_did_not_learn_makes_its_claim_inconclusive():
    m = metrics()
    m["learning"]["sweep_rounds"] = m["learning"]["trivial"]
    assert verdict(CLAIMS, "special_bwt_improves_with_rounds", m) == "inconclusive"
    assert verdict(CLAIMS, "special_bwt_improves_with_clients", m) == "pass"


def test_large_mu_forgetting_as_much_fails():
    m = metrics()
    m["methods"]["special_mu3"]["bwt"] = [-0.21, -0.26, -0.2]
    assert verdict(CLAIMS, "special_mu_raises_retention", m) == "fails"


def test_large_mu_as_plastic_fails():
    m = metrics()
    m["methods"]["special_mu3"]["plasticity"] = [0.71, 0.72, 0.72]
    assert verdict(CLAIMS, "special_mu_costs_plasticity", m) == "fails"


@pytest.mark.parametrize(
    "claim, key",
    [
        pytest.param(
            "special_bwt_improves_with_clients",
            "per_round",
            marks=pytest.mark.counterfactual("special", "special_bwt_improves_with_clients"),
        ),
        pytest.param(
            "special_bwt_improves_with_rounds",
            "rounds",
            marks=pytest.mark.counterfactual("special", "special_bwt_improves_with_rounds"),
        ),
        pytest.param(
            "special_bwt_improves_with_local_epochs",
            "local_epochs",
            marks=pytest.mark.counterfactual("special", "special_bwt_improves_with_local_epochs"),
        ),
    ],
)
def test_bwt_falling_along_a_sweep_fails(claim, key):
    m = metrics()
    m["sweeps"][key]["special"] = m["sweeps"][key]["special"][::-1]
    assert verdict(CLAIMS, claim, m) == "fails"


def test_a_missing_input_gives_a_failing_claim():
    m = metrics()
    del m["sweeps"]["rounds"]
    assert verdict(CLAIMS, "special_bwt_improves_with_rounds", m) == "fails"
    m = metrics()
    m["mu0_max_abs_difference_from_fedavg"] = float("nan")
    assert verdict(CLAIMS, "special_mu0_is_fedavg", m) == "fails"


def test_summary_metrics_and_sweeps_from_accuracy_matrices():
    import numpy as np

    from repro.papers.special.evaluate import summarise

    k = 3
    fed = np.array([[0.8, 0.1, 0.1], [0.5, 0.8, 0.1], [0.4, 0.5, 0.9]])
    spec = np.array([[0.7, 0.1, 0.1], [0.6, 0.7, 0.1], [0.6, 0.6, 0.8]])
    acc = np.stack([np.stack([fed, fed]), np.stack([fed, fed]), np.stack([spec, spec])])
    runs = {
        "main/acc": acc,
        "main/grad_norm": np.ones((3, 2, k, 2)),
        "main/residual": np.zeros((3, 2)),
        "main/learned": np.ones((3, 2, 6)),
        "per_round=2/acc": np.stack([np.stack([fed, fed])]),
        "per_round=2/learned": np.ones((1, 2, 6)),
        "test/y": np.arange(6) % 3,
        "train/y": np.zeros(9, dtype=int),
    }
    meta = {
        "domains": ["a", "b", "c"],
        "groups": {
            "main": {"variants": ["fedavg", "special_mu0", "special_mu1"]},
            "per_round=2": {"variants": ["special"]},
        },
    }
    settings = {"main_mu": 1.0, "mu": [1.0], "protocol": {"per_round": 5}, "sweeps": {"per_round": [2]}}
    m = summarise(runs, meta, settings)
    assert m["methods"]["fedavg"]["bwt"] == [pytest.approx(-0.35)] * 2
    assert m["methods"]["special_mu1"]["bwt"] == [pytest.approx(-0.1)] * 2
    assert m["methods"]["special_mu1"]["plasticity"] == [pytest.approx(0.7333333)] * 2
    assert m["sweeps"]["per_round"]["values"] == [2, 5]
    assert m["sweeps"]["per_round"]["special"][0] == [pytest.approx(-0.35)] * 2
    assert m["mu0_max_abs_difference_from_fedavg"] == 0.0
