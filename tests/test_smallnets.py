"""Small networks and fit(): shapes, learning, sample weights, model selection and exact resume."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from interrupt import Interrupted, interrupted_at

from repro.learning.smallnets import MLP, SmallCNN, fit, predict


def blobs(n: int = 64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    x = rng.normal(size=(n, 2, 3)).astype(np.float32) + 2.0 * y[:, None, None]
    return x, y


def test_model_shapes():
    assert MLP(6, [5, 4], 3)(torch.zeros(7, 2, 3)).shape == (7, 3)
    assert len(MLP(6, [5, 4], 3).activations(torch.zeros(7, 6))) == 2
    assert MLP(6, [], 3).features(torch.zeros(2, 6)).shape == (2, 6)
    for h, w in ((8, 8), (28, 28), (16, 15)):
        assert SmallCNN(1, 10, 4)(torch.zeros(2, h, w)).shape == (2, 10)
    assert SmallCNN(3, 2, 4).features(torch.zeros(2, 3, 8, 8)).shape == (2, 8)


def test_fit_learns_and_predict_batches():
    x, y = blobs()
    torch.manual_seed(0)
    model = MLP(6, [8], 2)
    fit(model, x, y, loss="ce", epochs=15, batch_size=16, lr=0.05, seed=0)
    assert (predict(model, x, batch_size=10).argmax(1) == y).mean() > 0.9


def test_zero_weights_equal_training_on_the_rest():
    """Weights are normalised to mean 1: full-batch weighted risk equals the subset's mean loss."""
    x, y = blobs(16)
    keep = np.arange(16) < 8
    models = []
    for xs, ys, w in ((x, y, keep.astype(float)), (x[keep], y[keep], None)):
        torch.manual_seed(0)
        models.append(MLP(6, [4], 2))
        fit(models[-1], xs, ys, loss="ce", epochs=3, batch_size=16, lr=0.1, seed=0, weights=w, optimizer="sgd")
    for a, b in zip(models[0].parameters(), models[1].parameters()):
        torch.testing.assert_close(a, b)
    with pytest.raises(ValueError, match="non-negative"):
        fit(models[0], x, y, loss="ce", epochs=1, batch_size=4, lr=0.1, seed=0, weights=-np.ones(16))


def test_validation_keeps_the_best_epoch_and_without_it_the_last():
    x, y = blobs()
    torch.manual_seed(0)
    model = MLP(6, [8], 2)
    result = fit(model, x, y, loss="ce", epochs=6, batch_size=16, lr=0.5, seed=0, val=(x[:8], 1 - y[:8]))
    scores = [h["val"] for h in result.history]
    assert result.best_epoch == int(np.argmin(scores))
    torch.manual_seed(0)
    last = MLP(6, [8], 1)
    fit(last, x, y, loss="mse", epochs=2, batch_size=16, lr=0.01, seed=0)
    torch.manual_seed(0)
    longer = MLP(6, [8], 1)
    fit(longer, x, y, loss="mse", epochs=3, batch_size=16, lr=0.01, seed=0)
    assert not torch.equal(last.head.weight, longer.head.weight)


def test_interrupted_fit_resumes_bit_for_bit(tmp_path, monkeypatch):
    x, y = blobs()
    x = x.astype(np.float32)

    def run(ckpt, interrupt_at=None):
        torch.manual_seed(0)
        model = MLP(6, [8], 2)
        kwargs = dict(loss="ce", epochs=5, batch_size=8, lr=0.05, seed=3, checkpoint=ckpt, checkpoint_every=1)
        if interrupt_at is None:
            fit(model, x, y, **kwargs)
        else:
            with interrupted_at(monkeypatch, interrupt_at), pytest.raises(Interrupted):
                fit(model, x, y, **kwargs)
        return model

    reference = run(tmp_path / "a.pt")
    run(tmp_path / "b.pt", interrupt_at=3)
    resumed = run(tmp_path / "b.pt")
    for a, b in zip(reference.state_dict().values(), resumed.state_dict().values()):
        assert torch.equal(a, b)
