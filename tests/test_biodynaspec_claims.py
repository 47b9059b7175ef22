"""BioDynaSpec's paper claims fail on counterfactual metrics (a baseline's trajectories in its place)."""

import copy

import pytest

from repro.papers.biodynaspec.claims import CLAIMS, FULL_SCALE
from repro.reporting.claims import verdict

MODELS = {"biodynaspec": 1.0, "static": 2.0, "time_ar": 1.6, "flow": 1.5, "biodynaspec_noirfc": 1.3}


def items(level, trajectories=3):
    return {
        f"p{i}_R1": {
            "r_s": [level],
            "r_s_per_sample": [level + 0.02 * k + 0.1 * i for k in range(8)],
        }
        for i in range(trajectories)
    }


def metrics():
    return {
        "s_report": 64,
        "per_item": {m: items(v) for m, v in MODELS.items()},
        # held-out training objective per window: trained networks far below their initialisation
        "heldout_loss": {
            m: {"loss": [0.3 + 0.01 * k for k in range(12)], "init_loss": [1.0 + 0.01 * k for k in range(12)]}
            for m in ("biodynaspec", "biodynaspec_noirfc", "time_ar", "flow")
        },
        "iwfd_checks": {
            "generator_path": {"composed_rmsd_max_A": 1e-6},
            "parseval_max_rel_dev": 1e-15,
            "truncation_max_increase_A": -0.01,
        },
        "synthetic": {"cfre_all": 0.1, "cfre_short": 0.4, "logcorr_spectral": 0.9, "logcorr_iid": 0.1},
        "summary": {"biodynaspec": {metric: 1.0 for metric, _, _ in FULL_SCALE.values()}},
        "reported": dict.fromkeys(FULL_SCALE, 1.0),
    }


def swapped(baseline):
    m = copy.deepcopy(metrics())
    m["per_item"][baseline] = copy.deepcopy(m["per_item"]["biodynaspec"])
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    assert {c.id: verdict(CLAIMS, c.id, metrics(), "full") for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


@pytest.mark.counterfactual("biodynaspec", "r_s_vs_static")
def test_as_good_as_copying_frame_zero_fails():
    assert verdict(CLAIMS, "r_s_vs_static", swapped("static")) == "fails"


@pytest.mark.counterfactual("biodynaspec", "r_s_vs_time_domain")
def test_as_good_as_time_domain_fails():
    assert verdict(CLAIMS, "r_s_vs_time_domain", swapped("time_ar")) == "fails"


@pytest.mark.counterfactual("biodynaspec", "r_s_vs_mdgen_style")
def test_as_good_as_flow_matching_fails():
    assert verdict(CLAIMS, "r_s_vs_mdgen_style", swapped("flow")) == "fails"


@pytest.mark.counterfactual("biodynaspec", "r_s_vs_no_irfc")
def test_ablation_as_good_fails():
    assert verdict(CLAIMS, "r_s_vs_no_irfc", swapped("biodynaspec_noirfc")) == "fails"


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("r_250", marks=pytest.mark.counterfactual("biodynaspec", "paper_r_250")),
        pytest.param("rmwd", marks=pytest.mark.counterfactual("biodynaspec", "paper_rmwd")),
        pytest.param("md_pca_w2", marks=pytest.mark.counterfactual("biodynaspec", "paper_md_pca_w2")),
        pytest.param("joint_pca_w2", marks=pytest.mark.counterfactual("biodynaspec", "paper_joint_pca_w2")),
        pytest.param("pca_psd_logcorr", marks=pytest.mark.counterfactual("biodynaspec", "paper_pca_psd_logcorr")),
        pytest.param("cfre", marks=pytest.mark.counterfactual("biodynaspec", "paper_cfre")),
    ],
)
def test_number_far_from_the_papers_fails(key):
    m = metrics()
    m["reported"][key] = 2.0
    assert verdict(CLAIMS, f"paper_{key}", m, "full") == "fails"


def test_generator_path_check_fails_on_a_drifting_reconstruction():
    m = metrics()
    m["iwfd_checks"]["generator_path"]["composed_rmsd_max_A"] = 0.03
    assert verdict(CLAIMS, "iwfd_generator_path_exact", m) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    m = metrics()
    m["per_item"]["static"]["p0_R1"]["r_s_per_sample"][0] = float("nan")
    del m["per_item"]["flow"]
    del m["heldout_loss"]["flow"]
    assert verdict(CLAIMS, "r_s_vs_static", m) == "fails"
    assert verdict(CLAIMS, "learn_flow", m) == "fails"
    assert verdict(CLAIMS, "r_s_vs_mdgen_style", m) == "inconclusive"


def test_the_interval_resamples_trajectories_not_only_samples():
    """A gain on one trajectory and a loss on another: every within-trajectory interval is tight, yet the
    claim must fail, because another draw of held-out trajectories could reverse it."""
    m = metrics()
    for model, level in (("biodynaspec", 1.0), ("time_ar", 1.0)):
        for i, key in enumerate(sorted(m["per_item"][model])):
            sign = 1 if i == 0 else -1
            shift = 0.5 * sign if model == "time_ar" else 0.0
            m["per_item"][model][key]["r_s_per_sample"] = [level + shift + 0.001 * k for k in range(8)]
    m["per_item"]["time_ar"][sorted(m["per_item"]["time_ar"])[0]]["r_s_per_sample"] = [
        2.5 + 0.001 * k for k in range(8)
    ]
    assert verdict(CLAIMS, "r_s_vs_time_domain", m) == "fails"


@pytest.mark.parametrize("model", ["biodynaspec", "biodynaspec_noirfc", "time_ar", "flow"])
def test_a_generator_no_better_than_its_initialisation_leaves_its_claims_inconclusive(model):
    m = copy.deepcopy(metrics())
    m["heldout_loss"][model]["loss"] = [0.95 * v for v in m["heldout_loss"][model]["init_loss"]]
    assert verdict(CLAIMS, f"learn_{model}", m) == "fails"
    resting = [c.id for c in CLAIMS if f"learn_{model}" in (c.rests_on or ()) and "smoke" in c.scales]
    assert resting and all(verdict(CLAIMS, c, m) == "inconclusive" for c in resting)
