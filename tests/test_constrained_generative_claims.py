"""The paper's claims pass on metrics that support them and fail on counterfactuals the paper denies; the
learning checks fail for a model no better than its untrained initialisation, leaving its claims inconclusive."""

import copy

import numpy as np
import pytest

from repro.papers.constrained_generative.claims import CLAIMS
from repro.reporting.claims import verdict

DIRECTIONS = 50


def run(mmd, sw, rate, gain=None, skill=0.9):
    """One stack's metrics; its per-direction W2^2 sits ``skill`` below its untrained initialisation's."""
    init = np.linspace(0.02, 0.04, DIRECTIONS)
    out = {
        "mmd2": mmd,
        "sw2": sw,
        "divergence_rate": rate,
        "sw2_per_direction": (init * (1 - skill)).tolist(),
        "init_sw2_per_direction": init.tolist(),
    }
    return out | ({"normal_gain": gain} if gain is not None else {})


def metrics():
    """Normal-space noise ahead of isotropic noise and raw data after projection; the raw flow's NLL keeps
    falling; the raw DDPM's noise predictor is steeper across the manifold."""
    task = {
        "checks": {
            "tangent_component_max": 1e-16,
            "eps_recovery_error_max": 1e-16,
            "projection_error_slope": 2.0,
            "violation_slope": 1.0,
        }
    }
    gains = {"raw": [5.0, 4.5, 5.3], "isotropic": [2.3, 2.4, 2.1], "normal": [2.3, 2.2, 2.6]}
    for kind in ("ddpm", "flow"):
        extra = (lambda p: gains[p]) if kind == "ddpm" else (lambda p: None)
        task[f"{kind}__raw"] = run([0.01, 0.012, 0.011], [0.2, 0.21, 0.2], [0.5, 0.6, 0.55], extra("raw"))
        task[f"{kind}__isotropic"] = run(
            [0.004, 0.005, 0.0045], [0.1, 0.11, 0.1], [0.01, 0.01, 0.02], extra("isotropic")
        )
        task[f"{kind}__normal"] = run([0.001, 0.0012, 0.0011], [0.05, 0.055, 0.05], [0.01, 0.02, 0.01], extra("normal"))
    return {"tasks": {"sphere": task}}


def swapped(kind, worse):
    m = copy.deepcopy(metrics())
    task = m["tasks"]["sphere"]
    for key in ("mmd2", "sw2"):
        task[f"{kind}__normal"][key], task[f"{kind}__{worse}"][key] = (
            task[f"{kind}__{worse}"][key],
            task[f"{kind}__normal"][key],
        )
    return m


def on_task(m, task):
    m = copy.deepcopy(m)
    m["tasks"] = {task: m["tasks"]["sphere"]}
    return m


def scale_of(task):
    return "smoke" if task == "sphere" else "full"


def test_every_claim_passes_on_metrics_that_support_it():
    for task in ("sphere", "torus", "graph"):
        scale = scale_of(task)
        tasks_named = [t for t in ("sphere", "torus", "graph") if t != task]
        ids = [c.id for c in CLAIMS if scale in c.scales and not any(f"_{t}_" in c.id for t in tasks_named)]
        assert {i: verdict(CLAIMS, i, on_task(metrics(), task), scale) for i in ids} == dict.fromkeys(ids, "pass")


@pytest.mark.parametrize(
    ("task", "kind", "worse", "claim"),
    [
        pytest.param(
            "sphere",
            "ddpm",
            "isotropic",
            "cg_sphere_ddpm_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_ddpm_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "sphere",
            "ddpm",
            "isotropic",
            "cg_sphere_ddpm_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_ddpm_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "sphere",
            "ddpm",
            "raw",
            "cg_sphere_ddpm_mmd2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_ddpm_mmd2_normal_beats_raw"),
        ),
        pytest.param(
            "sphere",
            "ddpm",
            "raw",
            "cg_sphere_ddpm_sw2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_ddpm_sw2_normal_beats_raw"),
        ),
        pytest.param(
            "sphere",
            "flow",
            "isotropic",
            "cg_sphere_flow_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_flow_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "sphere",
            "flow",
            "isotropic",
            "cg_sphere_flow_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_flow_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "sphere",
            "flow",
            "raw",
            "cg_sphere_flow_mmd2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_flow_mmd2_normal_beats_raw"),
        ),
        pytest.param(
            "sphere",
            "flow",
            "raw",
            "cg_sphere_flow_sw2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_flow_sw2_normal_beats_raw"),
        ),
        pytest.param(
            "torus",
            "ddpm",
            "isotropic",
            "cg_torus_ddpm_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_ddpm_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "torus",
            "ddpm",
            "isotropic",
            "cg_torus_ddpm_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_ddpm_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "torus",
            "ddpm",
            "raw",
            "cg_torus_ddpm_mmd2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_ddpm_mmd2_normal_beats_raw"),
        ),
        pytest.param(
            "torus",
            "ddpm",
            "raw",
            "cg_torus_ddpm_sw2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_ddpm_sw2_normal_beats_raw"),
        ),
        pytest.param(
            "torus",
            "flow",
            "isotropic",
            "cg_torus_flow_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_flow_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "torus",
            "flow",
            "isotropic",
            "cg_torus_flow_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_flow_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "torus",
            "flow",
            "raw",
            "cg_torus_flow_mmd2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_flow_mmd2_normal_beats_raw"),
        ),
        pytest.param(
            "torus",
            "flow",
            "raw",
            "cg_torus_flow_sw2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_flow_sw2_normal_beats_raw"),
        ),
        pytest.param(
            "graph",
            "ddpm",
            "isotropic",
            "cg_graph_ddpm_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_ddpm_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "graph",
            "ddpm",
            "isotropic",
            "cg_graph_ddpm_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_ddpm_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "graph",
            "ddpm",
            "raw",
            "cg_graph_ddpm_mmd2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_ddpm_mmd2_normal_beats_raw"),
        ),
        pytest.param(
            "graph",
            "ddpm",
            "raw",
            "cg_graph_ddpm_sw2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_ddpm_sw2_normal_beats_raw"),
        ),
        pytest.param(
            "graph",
            "flow",
            "isotropic",
            "cg_graph_flow_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_flow_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "graph",
            "flow",
            "isotropic",
            "cg_graph_flow_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_flow_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "graph",
            "flow",
            "raw",
            "cg_graph_flow_mmd2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_flow_mmd2_normal_beats_raw"),
        ),
        pytest.param(
            "graph",
            "flow",
            "raw",
            "cg_graph_flow_sw2_normal_beats_raw",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_flow_sw2_normal_beats_raw"),
        ),
    ],
)
def test_the_worse_perturbations_numbers_in_the_methods_place_fail(task, kind, worse, claim):
    assert verdict(CLAIMS, claim, on_task(metrics(), task), scale_of(task)) == "pass"
    assert verdict(CLAIMS, claim, on_task(swapped(kind, worse), task), scale_of(task)) == "fails"


@pytest.mark.parametrize(
    "task",
    [
        pytest.param(
            "sphere", marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_flow_raw_diverges")
        ),
        pytest.param("torus", marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_flow_raw_diverges")),
        pytest.param("graph", marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_flow_raw_diverges")),
    ],
)
def test_raw_flow_as_stable_as_normal_fails(task):
    good = on_task(metrics(), task)
    assert verdict(CLAIMS, f"cg_{task}_flow_raw_diverges", good, scale_of(task)) == "pass"
    good["tasks"][task]["flow__raw"]["divergence_rate"] = [0.01, 0.02, 0.01]
    assert verdict(CLAIMS, f"cg_{task}_flow_raw_diverges", good, scale_of(task)) == "fails"


@pytest.mark.parametrize(
    "task",
    [
        pytest.param(
            "sphere", marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_ddpm_raw_score_blows_up")
        ),
        pytest.param(
            "torus", marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_ddpm_raw_score_blows_up")
        ),
        pytest.param(
            "graph", marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_ddpm_raw_score_blows_up")
        ),
    ],
)
def test_a_raw_ddpm_no_steeper_than_the_normal_one_fails(task):
    m = on_task(metrics(), task)
    m["tasks"][task]["ddpm__raw"]["normal_gain"] = [2.2, 2.3, 2.5]
    assert verdict(CLAIMS, f"cg_{task}_ddpm_raw_score_blows_up", m, scale_of(task)) == "fails"


@pytest.mark.parametrize("kind", ["ddpm", "flow"])
@pytest.mark.parametrize("perturbation", ["raw", "isotropic", "normal"])
def test_a_model_no_better_than_its_initialisation_fails_its_learning_check(kind, perturbation):
    m = copy.deepcopy(metrics())
    stack = m["tasks"]["sphere"][f"{kind}__{perturbation}"]
    stack["sw2_per_direction"] = (np.asarray(stack["init_sw2_per_direction"]) * 0.9).tolist()
    check = f"learn_sphere_{kind}_{perturbation}"
    assert verdict(CLAIMS, check, m) == "fails"
    resting = [c.id for c in CLAIMS if check in (c.rests_on or ()) and "smoke" in c.scales]
    assert resting and all(verdict(CLAIMS, c, m) == "inconclusive" for c in resting)


def test_the_raw_flows_claim_rests_only_on_the_perturbed_flow_having_learned():
    (spec,) = [c for c in CLAIMS if c.id == "cg_sphere_flow_raw_diverges"]
    assert spec.rests_on == ("learn_sphere_flow_normal",)


def test_broken_checks_and_missing_inputs_fail():
    m = metrics()
    m["tasks"]["sphere"]["checks"] |= {
        "tangent_component_max": 1e-3,
        "projection_error_slope": 1.0,
        "violation_slope": 1.5,
    }
    for claim in (
        "cg_normal_noise_has_no_tangent_component",
        "cg_gauss_newton_second_order",
        "cg_violation_linear_in_sigma",
    ):
        assert verdict(CLAIMS, claim, m) == "fails"
    assert verdict(CLAIMS, "learn_sphere_flow_normal", {"tasks": {}}) == "fails"
    assert verdict(CLAIMS, "cg_sphere_flow_mmd2_normal_beats_isotropic", {"tasks": {}}) == "inconclusive"
