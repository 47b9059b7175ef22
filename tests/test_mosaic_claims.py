"""Mosaic's paper claims fail on counterfactual metrics (the MSE model's numbers in Mosaic's place, ...)."""

import copy

import pytest

from repro.papers.mosaic.claims import CLAIMS, FULL_SCALE
from repro.reporting.claims import verdict


def metrics():
    """Metrics shaped as the evaluate stage writes them, with Mosaic behaving as the paper says."""
    channels = ["geopotential_500", "temperature_850", "2m_temperature"]
    leads = [24 * i for i in range(1, 11)]
    score = {
        "rmse_mean": [[600.0] * 10, [2.7] * 10, [2.0] * 10],
        "crps": [[250.0] * 10, [1.2] * 10, [0.8] * 10],
        "spread_skill": [[0.95] * 10, [0.9] * 10, [0.9] * 10],
    }
    return {
        "channels": channels,
        "headline_channel": "geopotential_500",
        "lead_hours": leads,
        "scores": {"mosaic": score},
        "per_init": {
            "high_k_ratio": {
                "mosaic": [0.95, 1.0, 1.05, 0.98, 1.02],
                "mse": [0.3, 0.35, 0.32, 0.28, 0.31],
                "compressive": [0.5, 0.55, 0.45, 0.52, 0.5],
            },
            "crps": {"mosaic": [1.0, 1.1, 0.9, 1.0, 1.05], "dense": [1.0, 1.1, 0.92, 1.01, 1.04]},
        },
        # every trained model's normalised CRPS well below persistence's: their learning checks pass
        "learning": {
            "persistence": [1.0, 1.2, 0.9, 1.1, 1.0],
            **{m: [0.5, 0.6, 0.45, 0.55, 0.5] for m in ("mosaic", "mse", "compressive", "dense")},
        },
        "attention_exactness": {"selected_all_blocks": 1e-15},
        "attention_cost": [
            {"tokens": 1024, "dense_runs": [1.0, 1.1, 1.0], "block_sparse_runs": [0.1, 0.1, 0.11]},
            {"tokens": 2048, "dense_runs": [4.0, 4.1, 4.0], "block_sparse_runs": [0.2, 0.21, 0.2]},
        ],
        "era5_sample": {
            "crps_rank_vs_pairwise_max_rel": 1e-15,
            "rmse_ensemble_mean_z500": 100.0,
            "rmse_member_mean_z500": 130.0,
            "parseval_max_rel": 1e-15,
        },
        "reported": {
            "rmse_mean_geopotential_500_240h": 610.0,
            "rmse_mean_2m_temperature_240h": 2.05,
            "rmse_mean_temperature_850_240h": 2.75,
            "crps_geopotential_500_240h": 255.0,
            "spread_skill_geopotential_500_240h": 0.94,
        },
    }


def with_ratios(mosaic):
    m = metrics()
    m["per_init"]["high_k_ratio"]["mosaic"] = mosaic
    return m


def test_every_claim_passes_on_metrics_that_support_it():
    assert {c.id: verdict(CLAIMS, c.id, metrics(), "full") for c in CLAIMS} == {c.id: "pass" for c in CLAIMS}


@pytest.mark.counterfactual("mosaic", "crps_members_keep_spectrum")
def test_blurred_members_fail_spectral_fidelity():
    assert verdict(CLAIMS, "crps_members_keep_spectrum", with_ratios(metrics()["per_init"]["high_k_ratio"]["mse"])) == (
        "fails"
    )


@pytest.mark.counterfactual("mosaic", "mse_forecast_loses_spectrum")
def test_sharp_mse_forecast_fails():
    m = metrics()
    m["per_init"]["high_k_ratio"]["mse"] = m["per_init"]["high_k_ratio"]["mosaic"]
    assert verdict(CLAIMS, "mse_forecast_loses_spectrum", m) == "fails"


@pytest.mark.counterfactual("mosaic", "members_sharper_than_mse")
def test_members_as_blurred_as_mse_fail():
    assert verdict(CLAIMS, "members_sharper_than_mse", with_ratios([0.32, 0.34, 0.3, 0.29, 0.33])) == "fails"


@pytest.mark.counterfactual("mosaic", "compressive_latent_aliases")
def test_a_coarse_latent_as_faithful_as_native_resolution_fails():
    m = metrics()
    m["per_init"]["high_k_ratio"]["compressive"] = m["per_init"]["high_k_ratio"]["mosaic"]
    assert verdict(CLAIMS, "compressive_latent_aliases", m) == "fails"


def test_a_model_no_better_than_persistence_makes_its_claims_inconclusive():
    m = metrics()
    m["learning"]["mse"] = [1.0, 1.1, 0.95, 1.05, 1.0]
    assert verdict(CLAIMS, "learn_mse", m) == "fails"
    assert verdict(CLAIMS, "mse_forecast_loses_spectrum", m) == "inconclusive"
    assert verdict(CLAIMS, "crps_members_keep_spectrum", m) == "pass"


@pytest.mark.counterfactual("mosaic", "sparse_matches_dense")
def test_sparse_much_worse_than_dense_fails():
    m = metrics()
    m["per_init"]["crps"]["mosaic"] = [1.5, 1.6, 1.4, 1.5, 1.55]
    assert verdict(CLAIMS, "sparse_matches_dense", m, "full") == "fails"


@pytest.mark.counterfactual("mosaic", "spread_skill_near_one")
def test_under_dispersed_ensemble_fails():
    m = metrics()
    m["scores"]["mosaic"]["spread_skill"][0] = [0.3] * 10
    assert verdict(CLAIMS, "spread_skill_near_one", m) == "fails"


@pytest.mark.parametrize(
    "key",
    [
        pytest.param(
            "rmse_mean_geopotential_500_240h",
            marks=pytest.mark.counterfactual("mosaic", "paper_rmse_mean_geopotential_500_240h"),
        ),
        pytest.param(
            "rmse_mean_2m_temperature_240h",
            marks=pytest.mark.counterfactual("mosaic", "paper_rmse_mean_2m_temperature_240h"),
        ),
        pytest.param(
            "rmse_mean_temperature_850_240h",
            marks=pytest.mark.counterfactual("mosaic", "paper_rmse_mean_temperature_850_240h"),
        ),
        pytest.param(
            "crps_geopotential_500_240h", marks=pytest.mark.counterfactual("mosaic", "paper_crps_geopotential_500_240h")
        ),
        pytest.param(
            "spread_skill_geopotential_500_240h",
            marks=pytest.mark.counterfactual("mosaic", "paper_spread_skill_geopotential_500_240h"),
        ),
    ],
)
def test_score_far_from_the_papers_fails(key):
    assert set(FULL_SCALE) >= {key}
    m = copy.deepcopy(metrics())
    m["reported"][key] *= 2
    assert verdict(CLAIMS, f"paper_{key}", m, "full") == "fails"


def test_checks_fail_when_the_property_is_broken():
    m = metrics()
    m["attention_exactness"]["selected_all_blocks"] = 0.1
    m["attention_cost"][-1]["block_sparse_runs"] = [0.8, 0.8, 0.81]
    m["era5_sample"]["rmse_ensemble_mean_z500"] = 140.0
    for claim in ("block_sparse_equals_dense", "block_sparse_cost_subquadratic", "ensemble_mean_rmse_below_members"):
        assert verdict(CLAIMS, claim, m) == "fails"


def test_missing_or_nan_inputs_still_give_a_failing_claim():
    m = with_ratios([1.0, float("nan"), 1.0, 1.0, 1.0])
    del m["attention_cost"]
    assert verdict(CLAIMS, "crps_members_keep_spectrum", m) == "fails"
    assert verdict(CLAIMS, "block_sparse_cost_subquadratic", m) == "fails"
