"""NMNC's paper claims fail on the counterfactuals the paper denies."""

from __future__ import annotations

import copy

import pytest

from repro.papers.nmnc.claims import CLAIMS
from repro.reporting.claims import verdict

WIDTHS = [64, 128, 256, 512]


def seed(k: int) -> dict:
    j = 0.01 * k
    return {
        "seed": k,
        "bp_pretrained_test_accuracy": 0.96 + j,
        "rho_k": [0.80 + j, 0.83 + j],
        "rho_k_random": [0.03, 0.035],
        "cosine": {"vnc": [0.16, 0.17], "nmnc": [0.62 + j, 0.65], "random": [0.12, 0.11]},
        "cosine_margin": 0.45 + j,
        "test_accuracy": {"bp": 0.97, "vnc": 0.93, "nmnc": 0.95 + j, "random": 0.93, "readout": 0.92},
        "nmnc_margin_over_vnc_and_readout": 0.02 + j,
        "pr_width_slope": 0.07 + j,
        "pr_by_width": [6.0, 6.6, 6.8, 7.1],
        "rnn": {"rho_k": 0.60 + j, "rho_k_random": 0.12 + j},
        "rnn_cosine_margin": 0.2 + j,
    }


def learned(error=0.05, n=200) -> dict:
    """Per-item test errors of networks that learned (5 %) and of the class prior (90 %)."""
    model = [1.0] * int(error * n) + [0.0] * (n - int(error * n))
    names = ("bp_pretrained", "rnn", "width_nets", "nmnc", "vnc", "readout")
    return {"trivial": [1.0] * (9 * n // 10) + [0.0] * (n // 10)} | {k: model for k in names}


def metrics() -> dict:
    return {
        "learning": learned(),
        "settings": {"widths": WIDTHS},
        "unbiased_cosine": 0.997,
        "per_seed": [seed(k) for k in range(3)],
    }


def test_claims_pass_on_the_papers_pattern():
    for claim in CLAIMS:
        assert verdict(CLAIMS, claim.id, metrics()) == "pass", claim.id


@pytest.mark.counterfactual("nmnc", "nmnc_jacobian_in_manifold")
def test_random_subspace_energy_fails():
    m = metrics()
    for run in m["per_seed"]:
        run["rho_k"] = run["rho_k_random"]
    assert verdict(CLAIMS, "nmnc_jacobian_in_manifold", m) == "fails"


@pytest.mark.counterfactual("nmnc", "nmnc_cosine_beats_isotropic_and_random")
def test_nmnc_no_better_than_vnc_fails():
    m = metrics()
    for k, run in enumerate(m["per_seed"]):
        run["cosine_margin"] = 0.01 * (k - 1)  # NMNC as good as the best control, seed noise either way
    assert verdict(CLAIMS, "nmnc_cosine_beats_isotropic_and_random", m) == "fails"


@pytest.mark.counterfactual("nmnc", "nmnc_accuracy_beats_vnc")
def test_vnc_accuracy_in_place_of_nmnc_fails():
    m = copy.deepcopy(metrics())
    for run in m["per_seed"]:
        run["nmnc_margin_over_vnc_and_readout"] = 0.0
    assert verdict(CLAIMS, "nmnc_accuracy_beats_vnc", m) == "fails"


@pytest.mark.counterfactual("nmnc", "nmnc_accuracy_beats_vnc")
def test_readout_alone_as_accurate_as_nmnc_fails():
    """The baseline the mended claim adds: NMNC ahead of VNC but no better than training the readout alone."""
    from repro.papers.nmnc.metrics import summarise

    runs = fake_runs({"bp": 0.97, "vnc": 0.90, "nmnc": 0.93, "random": 0.9, "readout": 0.935})
    assert verdict(CLAIMS, "nmnc_accuracy_beats_vnc", summarise(runs, SETTINGS)) == "fails"
    runs = fake_runs({"bp": 0.97, "vnc": 0.90, "nmnc": 0.93, "random": 0.9, "readout": 0.91})
    margins = [r["nmnc_margin_over_vnc_and_readout"] for r in summarise(runs, SETTINGS)["per_seed"]]
    assert margins == [pytest.approx(0.02)] * 3


def test_a_readout_that_did_not_learn_makes_the_accuracy_claim_inconclusive():
    m = metrics()
    m["learning"]["readout"] = m["learning"]["trivial"]
    assert verdict(CLAIMS, "nmnc_accuracy_beats_vnc", m) == "inconclusive"
    assert verdict(CLAIMS, "nmnc_jacobian_in_manifold", m) == "pass"


def test_widths_above_the_input_dimension_are_left_out_of_the_dimension_slope():
    from repro.papers.nmnc.metrics import summarise

    runs = fake_runs({"bp": 0.97, "vnc": 0.9, "nmnc": 0.93, "random": 0.9, "readout": 0.91})
    out = summarise(runs, SETTINGS | {"widths": {"widths": [8, 16, 32, 64, 128]}})
    assert out["settings"]["widths"] == [8, 16, 32, 64]
    assert out["per_seed"][0]["pr_width_slope"] == pytest.approx(0.25)


SETTINGS = {
    "manifold": {"k": 8},
    "learn": {"n_perturb": 16},
    "widths": {"widths": [8, 16, 32, 64]},
    "perturb": {"budgets": [16]},
}


HITS = [1] * 45 + [0] * 5  # 10 % test error on 50 items; the class prior (label 0) is wrong on 45 of them


def fake_runs(accuracy: dict) -> dict:
    """runs.json as the train stage writes it (two hidden layers, PR growing as width^(1/4))."""
    layer = {
        "n": 256,
        "rho": {"8": 0.8},
        "rho_random": {"8": 0.03},
        "principal_cosines": [0.9],
        "participation_ratio": 6,
    }
    cos = {
        f"{li}/{m}/16": {"activation": c} for li in range(2) for m, c in (("vnc", 0.1), ("nmnc", 0.6), ("random", 0.1))
    }
    widths = {str(w): {"participation_ratio": [1.0, w**0.25], "test_correct": HITS} for w in (8, 16, 32, 64, 128)}
    rnn = {"rho_k": 0.6, "cosine": {"vnc": 0.1, "nmnc": 0.3, "random": 0.1}, "test_correct": HITS}
    run = {
        "alignment": {"layers": [layer, layer]},
        "cosines": cos,
        "pretrained_test_accuracy": 0.96,
        "pretrained_test_correct": HITS,
        "learning": {m: {"test_accuracy": a, "test_correct": HITS} for m, a in accuracy.items()},
        "widths": widths,
        "rnn": rnn,
    }
    return {
        "runs": [run | {"seed": k} for k in range(3)],
        "unbiased_cosine": 0.99,
        "n_in": 64,
        "test_labels": [1] * 45 + [0] * 5,
        "prior_class": 0,
    }


@pytest.mark.counterfactual("nmnc", "nmnc_dimension_sublinear_in_width")
def test_dimension_linear_in_width_fails():
    m = metrics()
    for k, run in enumerate(m["per_seed"]):
        run["pr_width_slope"] = 1.0 + 0.01 * k
    assert verdict(CLAIMS, "nmnc_dimension_sublinear_in_width", m) == "fails"


@pytest.mark.counterfactual("nmnc", "nmnc_rnn_jacobian_in_manifold")
def test_rnn_random_subspace_energy_fails():
    m = metrics()
    for run in m["per_seed"]:
        run["rnn"]["rho_k"] = run["rnn"]["rho_k_random"]
    assert verdict(CLAIMS, "nmnc_rnn_jacobian_in_manifold", m) == "fails"


@pytest.mark.counterfactual("nmnc", "nmnc_rnn_cosine_beats_isotropic_and_random")
def test_rnn_nmnc_no_better_than_vnc_fails():
    m = metrics()
    for k, run in enumerate(m["per_seed"]):
        run["rnn_cosine_margin"] = 0.01 * (k - 1)
    assert verdict(CLAIMS, "nmnc_rnn_cosine_beats_isotropic_and_random", m) == "fails"
