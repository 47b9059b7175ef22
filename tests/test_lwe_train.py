"""The LWE distinguisher training resumes bit for bit after an interruption inside the epoch loop."""

import logging

import numpy as np
import pytest

from repro.papers.lwe import train as train_stage

CFG = {"hidden": 8, "batch_size": 32, "lr": 0.003, "test_samples": 40}


def tiny_data() -> dict:
    rng = np.random.default_rng(0)
    ra = rng.integers(-125, 126, size=(240, 10))
    secrets = np.zeros((3, 10), dtype=np.int8)
    secrets[:, :2] = 1
    return {
        "R_A": ra,
        "R_b": np.mod(ra @ secrets.T.astype(np.int64), 251).T,
        "secrets": secrets,
        "params": np.array([10, 251, 9, 4]),
    }


def test_interrupted_training_equals_an_uninterrupted_run(tmp_path, monkeypatch, caplog):
    data, cruel = tiny_data(), np.arange(6)
    reference = train_stage.fit_grid_point(data, cruel, 160, 4, CFG, 0, tmp_path / "ref.pt")
    original = train_stage.epoch_rng

    def interrupted(seed, epoch):
        if epoch == 2:
            raise RuntimeError("killed")
        return original(seed, epoch)

    monkeypatch.setattr(train_stage, "epoch_rng", interrupted)
    with pytest.raises(RuntimeError, match="killed"):
        train_stage.fit_grid_point(data, cruel, 160, 4, CFG, 0, tmp_path / "run.pt")
    assert (tmp_path / "run.pt").exists()
    monkeypatch.setattr(train_stage, "epoch_rng", original)
    with caplog.at_level(logging.INFO):
        resumed = train_stage.fit_grid_point(data, cruel, 160, 4, CFG, 0, tmp_path / "run.pt")
    assert "resumed from" in caplog.text
    np.testing.assert_array_equal(reference, resumed)
    assert not (tmp_path / "run.pt").exists()
