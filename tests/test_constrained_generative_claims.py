"""The paper's claims pass on metrics that support them and fail on counterfactuals the paper denies."""

import copy

import pytest

from repro.papers.constrained_generative.claims import CLAIMS
from repro.reporting.claims import verdict


def run(mmd, sw, rate):
    return {"mmd2": mmd, "sw2": sw, "divergence_rate": rate}


def metrics():
    """Normal-space noise ahead of isotropic noise after projection; the raw flow's NLL keeps falling."""
    task = {
        "checks": {
            "tangent_component_max": 1e-16,
            "eps_recovery_error_max": 1e-16,
            "projection_error_slope": 2.0,
            "violation_slope": 1.0,
        }
    }
    for kind in ("ddpm", "flow"):
        task[f"{kind}__raw"] = run([0.01, 0.012, 0.011], [0.2, 0.21, 0.2], [0.5, 0.6, 0.55])
        task[f"{kind}__isotropic"] = run([0.004, 0.005, 0.0045], [0.1, 0.11, 0.1], [0.01, 0.01, 0.02])
        task[f"{kind}__normal"] = run([0.001, 0.0012, 0.0011], [0.05, 0.055, 0.05], [0.01, 0.02, 0.01])
    return {"tasks": {"sphere": task}}


def swapped(kind):
    m = copy.deepcopy(metrics())
    task = m["tasks"]["sphere"]
    task[f"{kind}__normal"], task[f"{kind}__isotropic"] = task[f"{kind}__isotropic"], task[f"{kind}__normal"]
    return m


def test_every_smoke_claim_passes_on_metrics_that_support_it():
    assert all(verdict(CLAIMS, c.id, metrics()) == "pass" for c in CLAIMS if "smoke" in c.scales)


@pytest.mark.counterfactual("constrained-generative", "cg_sphere_flow_raw_diverges")
def test_raw_flow_as_stable_as_normal_fails():
    m = metrics()
    m["tasks"]["sphere"]["flow__raw"]["divergence_rate"] = [0.01, 0.02, 0.01]
    assert verdict(CLAIMS, "cg_sphere_flow_raw_diverges", m) == "fails"


def on_task(m, task):
    m = copy.deepcopy(m)
    m["tasks"] = {task: m["tasks"]["sphere"]}
    return m


def scale_of(task):
    return "smoke" if task == "sphere" else "full"


@pytest.mark.parametrize(
    ("task", "kind", "claim"),
    [
        pytest.param(
            "sphere",
            "ddpm",
            "cg_sphere_ddpm_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_ddpm_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "sphere",
            "ddpm",
            "cg_sphere_ddpm_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_ddpm_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "sphere",
            "flow",
            "cg_sphere_flow_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_flow_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "sphere",
            "flow",
            "cg_sphere_flow_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_sphere_flow_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "torus",
            "ddpm",
            "cg_torus_ddpm_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_ddpm_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "torus",
            "ddpm",
            "cg_torus_ddpm_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_ddpm_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "torus",
            "flow",
            "cg_torus_flow_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_flow_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "torus",
            "flow",
            "cg_torus_flow_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_flow_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "graph",
            "ddpm",
            "cg_graph_ddpm_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_ddpm_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "graph",
            "ddpm",
            "cg_graph_ddpm_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_ddpm_sw2_normal_beats_isotropic"),
        ),
        pytest.param(
            "graph",
            "flow",
            "cg_graph_flow_mmd2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_flow_mmd2_normal_beats_isotropic"),
        ),
        pytest.param(
            "graph",
            "flow",
            "cg_graph_flow_sw2_normal_beats_isotropic",
            marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_flow_sw2_normal_beats_isotropic"),
        ),
    ],
)
def test_isotropic_numbers_in_the_methods_place_fail(task, kind, claim):
    assert verdict(CLAIMS, claim, on_task(metrics(), task), scale_of(task)) == "pass"
    assert verdict(CLAIMS, claim, on_task(swapped(kind), task), scale_of(task)) == "fails"


@pytest.mark.parametrize(
    "task",
    [
        pytest.param("torus", marks=pytest.mark.counterfactual("constrained-generative", "cg_torus_flow_raw_diverges")),
        pytest.param("graph", marks=pytest.mark.counterfactual("constrained-generative", "cg_graph_flow_raw_diverges")),
    ],
)
def test_full_scale_raw_flow_as_stable_as_normal_fails(task):
    good = on_task(metrics(), task)
    assert verdict(CLAIMS, f"cg_{task}_flow_raw_diverges", good, "full") == "pass"
    good["tasks"][task]["flow__raw"]["divergence_rate"] = [0.0, 0.0, 0.0]
    assert verdict(CLAIMS, f"cg_{task}_flow_raw_diverges", good, "full") == "fails"


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
    assert verdict(CLAIMS, "cg_sphere_flow_mmd2_normal_beats_isotropic", {"tasks": {}}) == "fails"
