"""Exact properties of the HySoMi process model, parameter head and constraints (brief E1-E5)."""

import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from repro.papers.hysomi.constraints import hinge, load_ratios, ratio_penalties, tradeoff_penalty
from repro.papers.hysomi.models import ParameterHead
from repro.papers.hysomi.soil_model import PARAMS, SIM_DT, STATES, Bounds, fluxes, simulate

TIMES = [0, 1, 2, 4, 7, 10, 14, 21, 28, 35, 42, 49, 60]
X0 = torch.tensor([20.0, 0.1, 0.4, 0.01, 0.0], dtype=torch.float64)


@pytest.fixture(scope="module")
def bounds(repo):
    return Bounds.from_yaml(repo / "resources/hysomi/constraints.yaml")


def _random_theta(bounds, n, seed=0):
    u = torch.rand(n, len(PARAMS), generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return bounds.from_unit(u)


def test_rk4_agrees_with_solve_ivp(bounds):
    theta = _random_theta(bounds, 5)
    ours = simulate(X0.expand(5, -1), theta, TIMES, 0.25, bounds.f_s).numpy()
    for i in range(5):
        ref = solve_ivp(
            lambda t, x: fluxes(torch.tensor(x), theta[i], bounds.f_s).numpy(),
            (0, 60),
            X0.numpy(),
            t_eval=TIMES,
            method="LSODA",
            rtol=1e-10,
            atol=1e-12,
        )
        np.testing.assert_allclose(ours[i], ref.y.T, rtol=1e-5, atol=1e-7)


def test_total_carbon_conserved_to_round_off(bounds):
    traj = simulate(X0.expand(200, -1), _random_theta(bounds, 200, seed=1), TIMES, 1.0, bounds.f_s)
    total = traj.sum(-1)
    assert ((total - total[:, :1]).abs() / total[:, :1]).max() < 1e-10


def test_states_stay_non_negative_at_the_bounds(bounds):
    corners = torch.tensor(np.array(np.meshgrid(*[[0.0, 1.0]] * len(PARAMS))).reshape(len(PARAMS), -1).T)
    traj = simulate(X0.expand(len(corners), -1), bounds.from_unit(corners), TIMES, 1.0, bounds.f_s)
    assert traj.min() >= -1e-9


def test_parameter_head_stays_in_bounds_for_extreme_traits(bounds):
    head = ParameterHead([0, 1, 2], d_in=6, hidden=16, bounds=bounds)
    with torch.no_grad():
        for layer in head.mlp.weights:
            layer.mul_(1000.0)
        traits = torch.tensor([[1e3] * 6, [-1e3] * 6, [1e3, -1e3] * 3], dtype=torch.float64)
        theta = head(traits)
    assert torch.all(theta >= bounds.lo) and torch.all(theta <= bounds.hi)
    assert torch.isfinite(theta).all()


def test_bounds_map_is_invertible(bounds):
    u = torch.rand(50, len(PARAMS), dtype=torch.float64)
    torch.testing.assert_close(bounds.to_unit(bounds.from_unit(u)), u)


def test_true_parameters_reproduce_the_noise_free_data(bounds, tmp_path):
    from repro.data.metagenome import generate

    section = {
        "seed": 3,
        "n_samples": 12,
        "split_fractions": [0.5, 0.25, 0.25],
        "complexity": ["L1"],
        "noise_sd": 0.05,
        "t_end": 60,
        "obs_days": TIMES,
        "observed_states": ["CO2", "MBC"],
    }
    traits, obs, params = generate(section, bounds)
    theta = torch.tensor(params[list(PARAMS)].to_numpy())
    again = simulate(torch.tensor(obs["x0"].values), theta, TIMES, SIM_DT, bounds.f_s).numpy()
    assert np.array_equal(again, obs["truth"].values)
    observed = obs["observed"].values
    log_ratio = np.log(obs["value"].values[observed][1:] / obs["truth"].values[observed][1:])
    finite = np.isfinite(log_ratio)
    assert abs(log_ratio[finite].std() - 0.05) < 0.01  # the only misfit at the true parameters is the noise


def test_penalties_vanish_inside_their_ranges(repo):
    ratios = load_ratios(repo / "resources/hysomi/constraints.yaml")
    assert torch.all(hinge(torch.tensor([1.0, 1.5, 2.0]), 1.0, 2.0) == 0)
    assert hinge(torch.tensor(2.5), 1.0, 2.0) == pytest.approx(0.25)
    inside = torch.zeros(1, 1, 3, len(STATES), dtype=torch.float64)
    inside[..., STATES.index("SOC")] = 20.0
    inside[..., STATES.index("MBC")] = 0.4  # 2 % of SOC
    inside[..., STATES.index("ENZ")] = 0.004  # 1 % of MBC
    inside[..., STATES.index("DOC")] = 0.1  # 0.5 % of SOC
    w = torch.ones(1, 1, dtype=torch.float64)
    assert ratio_penalties(inside, ratios, w).item() == 0.0
    outside = inside.clone()
    outside[..., STATES.index("MBC")] = 2.0  # 10 % of SOC
    assert ratio_penalties(outside, ratios, w).item() > 0


def test_tradeoff_penalty_only_for_positive_correlation():
    theta = torch.zeros(1, 10, len(PARAMS), dtype=torch.float64)
    ramp = torch.linspace(0.1, 1.0, 10, dtype=torch.float64)
    theta[0, :, PARAMS.index("V_u")] = ramp
    theta[0, :, PARAMS.index("CUE")] = ramp.flip(0)
    w = torch.ones(1, 10, dtype=torch.float64)
    assert tradeoff_penalty(theta, w).item() == 0.0
    theta[0, :, PARAMS.index("CUE")] = ramp
    assert tradeoff_penalty(theta, w).item() == pytest.approx(1.0)
