"""NMNC training: the surrogate's gradient is the local noise-correlation update, runs resume exactly, and the
GPU probe builds on the CPU."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml
from interrupt import Interrupted, interrupted_at

from repro.learning.smallnets import MLP
from repro.learning.training import train
from repro.papers.nmnc import gpu_probe, nc
from repro.papers.nmnc.learning import NoiseCorrelationMLP
from repro.papers.nmnc.rnn import RowRNN, as_rows


def small(seed: int = 0, k: int = 3) -> NoiseCorrelationMLP:
    torch.manual_seed(seed)
    return NoiseCorrelationMLP(MLP(5, [6, 4], 3, activation="tanh"), k)


def test_surrogate_gradient_is_the_local_update():
    """dW_1 = sum_i (f'(s_i) * g_i) x_i^T / B with g the estimate drawn under the same seed."""
    model = small()
    x, y = torch.randn(8, 5), torch.randint(0, 3, (8,))
    torch.manual_seed(5)
    model.surrogate(x, y, "vnc", 4, 0.1, 10).backward()
    grad_w0 = model.net.hidden_layers[0].weight.grad.clone()
    fresh = small()
    with torch.no_grad():
        acts = fresh.net.activations(x)
    torch.manual_seed(5)
    g = nc.estimate_activity_gradient(fresh._loss_above(0, y), acts[0], 4, 0.1)
    expected = ((1 - acts[0] ** 2) * g).T @ x / len(x)
    torch.testing.assert_close(grad_w0, expected)


def test_nmnc_basis_is_the_activity_pcs_and_updates_stay_in_it():
    model = small(k=2)
    x, y = torch.randn(64, 5), torch.randint(0, 3, (64,))
    model.surrogate(x, y, "nmnc", 4, 0.1, 10)
    with torch.no_grad():
        acts = model.net.activations(x)[1].numpy()
    expected = nc.pca_basis(acts, 2)
    got = model.basis1.double().numpy()
    np.testing.assert_allclose(np.abs(expected.T @ got), np.eye(2), atol=1e-4)
    with pytest.raises(ValueError, match="unknown method"):
        model.surrogate(x, y, "feedback_alignment", 4, 0.1, 10)


def run(tmp_path, name, monkeypatch=None, interrupt=None):
    model = small()
    x, y = torch.randn(32, 5), torch.randint(0, 3, (32,))

    def batches(epoch):
        for i in range(0, 32, 8):
            yield x[i : i + 8], y[i : i + 8]

    kwargs = dict(
        epochs=4,
        optimizer=torch.optim.Adam(model.net.parameters(), lr=0.01),
        seed=1,
        checkpoint=tmp_path / name,
        checkpoint_every=1,
        keep_last=True,
    )
    objective = lambda m, b: m.surrogate(*b, "nmnc", 4, 0.1, 3)  # noqa: E731
    if interrupt is None:
        train(model, objective, batches, **kwargs)
    else:
        with interrupted_at(monkeypatch, interrupt), pytest.raises(Interrupted):
            train(model, objective, batches, **kwargs)
    return model


def test_interrupted_nmnc_training_resumes_bit_for_bit(tmp_path, monkeypatch):
    reference = run(tmp_path, "a.pt")
    run(tmp_path, "b.pt", monkeypatch, interrupt=2)
    resumed = run(tmp_path, "b.pt")
    for (name, a), b in zip(reference.state_dict().items(), resumed.state_dict().values()):
        assert torch.equal(a, b), name


def test_gpu_probe_builds_on_cpu_with_the_default_section():
    section = yaml.safe_load(open("config/config.yaml"))["papers"]["nmnc"]
    model, batch, loss = gpu_probe.build(section, torch.device("cpu"))
    loss(model, batch(2)).backward()
    assert model.net.hidden_layers[0].weight.grad is not None


def test_rnn_continues_from_any_step_and_reads_rows():
    torch.manual_seed(0)
    model = RowRNN(3, 5)
    x, y = torch.randn(4, 6, 3), torch.randint(0, 10, (4,))
    states = model.run_from(None, x, 0)
    full = torch.nn.functional.cross_entropy(model(x), y, reduction="none")
    for t in (0, 2, 5):
        torch.testing.assert_close(model.loss_after(t, x, y)(states[t]), full)
    flat = np.arange(2 * 3 * 2 * 4, dtype=np.float32).reshape(2, -1)  # two images, (C=3, H=2, W=4)
    rows = as_rows(flat, {"size": [2, 4], "channels": 3})
    assert rows.shape == (2, 2, 12)
    np.testing.assert_array_equal(rows[0, 1, :4], flat[0].reshape(3, 2, 4)[0, 1])
