"""PDRF's mechanism: induced velocity and its exact last step, the restoring effect, motion estimation and
SL extrapolation, the teacher term, resumable training."""

import numpy as np
import pytest
import torch

from repro.data.fields.simulators import semi_lagrangian
from repro.papers.pdrf import train as pdrf_train
from repro.papers.pdrf.nowcast import extrapolate, lucas_kanade

SETTINGS = {"train": {"epochs": 3, "batch": 4, "lr": 0.01, "schedule": "cosine"}}


def test_data_space_last_euler_step_returns_the_network_output():
    torch.manual_seed(0)
    model = pdrf_train.Nowcaster("data", 2, 3, width=4, levels=1)
    cond = np.random.default_rng(0).normal(size=(2, 2, 8, 8)).astype(np.float32)
    assert pdrf_train.last_step_identity(model, cond, 3, nfe=4, seed=0) <= 1e-6


def test_velocity_is_induced_from_the_data_prediction():
    torch.manual_seed(1)
    model = pdrf_train.Nowcaster("data", 2, 3, width=4, levels=1)
    x, c, t = torch.randn(2, 3, 8, 8), torch.randn(2, 2, 8, 8), torch.tensor([0.3, 0.9])
    expected = (model(x, t, c) - x) / (1 - t).view(-1, 1, 1, 1)
    torch.testing.assert_close(model.velocity(x, t, c), expected)


def test_oracle_restoring_effect_and_its_absence_for_velocity_sampling():
    checks = pdrf_train.restoring_check((2, 3, 4, 4), nfe=4, seed=0)
    assert checks["data_space_residual_ratio"] <= 1e-6
    assert checks["velocity_residual_ratio"] == pytest.approx(1.0)


def test_lucas_kanade_recovers_uniform_motion_and_sl_extrapolation_follows_it():
    rng = np.random.default_rng(0)
    from repro.data.fields.simulators import power_law_noise

    frame = power_law_noise(rng, 1, 32, beta=-4.0)[0]
    motion = np.zeros((2, 32, 32))
    motion[0], motion[1] = 0.6, -0.4
    past = [frame]
    for _ in range(3):
        past.append(semi_lagrangian(past[-1], motion))
    estimate = lucas_kanade(np.stack(past), window=3.0, ridge=1e-3)
    np.testing.assert_allclose(estimate.mean(axis=(1, 2)), [0.6, -0.4], atol=0.1)
    ahead = extrapolate(past[-1], motion, 2)
    np.testing.assert_allclose(ahead[1], semi_lagrangian(past[-1], 2 * motion))
    assert np.abs(ahead[0] - semi_lagrangian(past[-1], motion)).max() == 0


def test_teacher_term_adds_only_for_the_data_parameterisation():
    torch.manual_seed(2)
    # (sequences of 2 past + 3 future frames on the 0-255 scale, the coarse SL target (4x4 blocks))
    batch = (torch.rand(3, 5, 8, 8) * 255, torch.rand(3, 3, 2, 2) * 255)
    model = pdrf_train.Nowcaster("data", 2, 3, width=4, levels=1)
    torch.manual_seed(3)
    plain = pdrf_train.loss_fn(model, batch, 0.0)
    torch.manual_seed(3)
    taught = pdrf_train.loss_fn(model, batch, 1.0)
    assert taught > plain
    velocity = pdrf_train.Nowcaster("velocity", 2, 3, width=4, levels=1)
    torch.manual_seed(3)
    a = pdrf_train.loss_fn(velocity, batch, 0.0)
    torch.manual_seed(3)
    assert pdrf_train.loss_fn(velocity, batch, 1.0) == a


def test_interrupted_training_resumes_to_the_same_weights(tmp_path):
    rng = np.random.default_rng(0)
    arrays = (
        (rng.uniform(0, 255, size=(8, 5, 8, 8))).astype(np.float32),
        (rng.uniform(0, 255, size=(8, 3, 2, 2))).astype(np.float32),
    )
    torch.manual_seed(4)
    start = pdrf_train.Nowcaster("data", 2, 3, width=4, levels=1).state_dict()

    def fresh():
        model = pdrf_train.Nowcaster("data", 2, 3, width=4, levels=1)
        model.load_state_dict(start)
        return model

    reference = fresh()
    pdrf_train.fit(reference, arrays, SETTINGS, 0, 0.5, tmp_path / "ref.pt")
    calls = {"n": 0}

    def failing(model, batch, teacher):
        calls["n"] += 1
        if calls["n"] == 4:
            raise RuntimeError("killed")
        return pdrf_train.loss_fn(model, batch, teacher)

    with pytest.raises(RuntimeError, match="killed"):
        pdrf_train.fit(fresh(), arrays, SETTINGS, 0, 0.5, tmp_path / "ckpt.pt", loss=failing)
    resumed = fresh()
    assert pdrf_train.fit(resumed, arrays, SETTINGS, 0, 0.5, tmp_path / "ckpt.pt").resumed_from == 1
    for name, value in reference.state_dict().items():
        torch.testing.assert_close(resumed.state_dict()[name], value, rtol=0, atol=0)


def test_missing_pixels_are_no_echo_in_the_inputs_and_out_of_the_loss():
    torch.manual_seed(5)
    model = pdrf_train.Nowcaster("data", 2, 3, width=4, levels=1)
    seq = torch.rand(2, 5, 8, 8) * 255
    sl = torch.rand(2, 3, 2, 2) * 255
    cond, x1, valid, _ = pdrf_train.unit_batch((seq, sl), 2)
    assert valid.all()
    holed = seq.clone()
    holed[:, 3, :4] = float("nan")  # a future frame's pixels missing
    holed[:, 0, :2] = float("nan")  # and a past frame's
    cond_h, x1_h, valid_h, _ = pdrf_train.unit_batch((holed, sl), 2)
    assert torch.isfinite(cond_h).all() and (cond_h[:, 0, :2] == -1).all()
    assert not valid_h[:, 1, :4].any() and valid_h.sum() == valid.numel() - 2 * 4 * 8
    torch.manual_seed(6)
    loss = pdrf_train.loss_fn(model, (holed, sl), 0.0)
    assert torch.isfinite(loss)
    # the missing targets do not enter the loss: changing what they are filled with changes nothing
    torch.manual_seed(6)
    out = pdrf_train.masked_mse(torch.zeros_like(x1_h), x1_h, valid_h)
    x1_other = torch.where(valid_h, x1_h, torch.full_like(x1_h, 5.0))
    assert pdrf_train.masked_mse(torch.zeros_like(x1_h), x1_other, valid_h) == out
