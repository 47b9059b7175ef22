"""GPO-lite's distinctive properties: basis to basis on any point set, clamped scales, resumable training."""

import numpy as np
import pytest
import torch

from repro.learning.operators import grid_coordinates
from repro.papers.gpo import train as gpo_train
from repro.papers.gpo.model import GPO, GaussianBasis

SETTINGS = {
    "model": {
        "width": 8,
        "particles": 9,
        "layers": 1,
        "heads": 2,
        "sigma_min": 0.05,
        "sigma_max": 0.3,
        "align_weight": 0.01,
        "fno_modes": 4,
    },
    "train": {"epochs": 4, "batch": 4, "lr": 0.01},
}


def test_scales_stay_within_their_clamps_and_centres_in_the_domain():
    basis = GaussianBasis(16, 0.05, 0.3, periodic=True)
    with torch.no_grad():
        basis.sigma_raw.fill_(50.0)
        basis.mu_raw.fill_(-50.0)
    assert torch.all(basis.scales <= 0.3) and torch.all(basis.scales >= 0.05)
    assert torch.all((basis.centres >= 0) & (basis.centres <= 1))


def test_periodic_basis_wraps_distances():
    basis = GaussianBasis(1, 0.1, 0.1, periodic=True)
    with torch.no_grad():
        basis.mu_raw.fill_(float(torch.logit(torch.tensor(0.02))))
    with torch.no_grad():
        near, wrapped = basis(torch.tensor([[[0.06, 0.02]], [[0.0, 0.02]]]))[:, 0, 0].tolist()
        across = basis(torch.tensor([[[0.98, 0.02]]]))[0, 0, 0].item()
    assert across == pytest.approx(near, rel=1e-4) and wrapped > near


def test_same_weights_run_on_any_grid_and_on_point_subsets():
    torch.manual_seed(0)
    model = GPO(1, 1, width=8, particles=9, layers=2, heads=2)
    for n in (16, 32, 64):
        assert model(torch.randn(2, 1, n, n)).shape == (2, 1, n, n)
    values = torch.randn(1, 100, 1)
    coords = torch.rand(1, 100, 2)
    perm = torch.randperm(100)
    torch.testing.assert_close(
        model.forward_points(values, coords)[:, perm],
        model.forward_points(values[:, perm], coords[:, perm]),
        atol=1e-5,
        rtol=1e-5,
    )


def test_exact_checks_hold_on_an_untrained_model():
    torch.manual_seed(1)
    checks = gpo_train.exact_checks(
        GPO(1, 1, width=8, particles=9, layers=1, heads=2), np.random.rand(2, 1, 8, 8).astype(np.float32), 0
    )
    assert checks["decoder_max_abs_diff"] <= 1e-6 and checks["measurement_permutation_max_abs_diff"] <= 1e-5


def test_gaussian_reconstruction_is_linear_in_the_mode_weights():
    torch.manual_seed(2)
    layer = GPO(1, 1, width=4, particles=4, layers=1, heads=1).layers[0]
    coords = grid_coordinates(1, 8, 8).flatten(2).transpose(1, 2)
    z1, z2 = torch.randn(1, 4, 4), torch.randn(1, 4, 4)
    torch.testing.assert_close(
        layer.reconstruct(z1 + 2 * z2, coords), layer.reconstruct(z1, coords) + 2 * layer.reconstruct(z2, coords)
    )


def test_interrupted_training_resumes_to_the_same_weights(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(12, 1, 8, 8)).astype(np.float32), rng.normal(size=(12, 1, 8, 8)).astype(np.float32)
    torch.manual_seed(3)
    reference = GPO(1, 1, width=8, particles=9, layers=1, heads=2)
    start = {k: v.clone() for k, v in reference.state_dict().items()}
    gpo_train.fit(reference, x, y, SETTINGS, 0, tmp_path / "ref.pt")
    calls = {"n": 0}

    def failing(model, batch, align):
        calls["n"] += 1
        if calls["n"] == 7:  # inside epoch 2 (3 batches per epoch)
            raise RuntimeError("killed")
        return gpo_train.mse_loss(model, batch, align)

    model = GPO(1, 1, width=8, particles=9, layers=1, heads=2)
    model.load_state_dict(start)
    with pytest.raises(RuntimeError, match="killed"):
        gpo_train.fit(model, x, y, SETTINGS, 0, tmp_path / "ckpt.pt", loss_fn=failing)
    resumed = GPO(1, 1, width=8, particles=9, layers=1, heads=2)
    resumed.load_state_dict(start)
    result = gpo_train.fit(resumed, x, y, SETTINGS, 0, tmp_path / "ckpt.pt")
    assert result.resumed_from == 2
    for name, value in reference.state_dict().items():
        torch.testing.assert_close(resumed.state_dict()[name], value, rtol=0, atol=0)
