"""Training interrupted inside its loop and rerun ends with the same samples and histories bit for bit."""

from types import SimpleNamespace as NS

import numpy as np
import pytest
from interrupt import Interrupted, interrupted_at, same_arrays

from repro.papers.constrained_generative import train
from repro.papers.constrained_generative.manifolds import sphere_points

SETTINGS = {
    "tasks": ["sphere"],
    "seeds": [0, 1],
    "sigma": 0.1,
    "samples": 16,
    "model_kinds": ["ddpm", "flow"],
    "perturbations": ["raw", "normal"],
    "models": {
        "ddpm": {"hidden": 8, "layers": 1, "steps": 5, "beta": [1e-4, 0.2]},
        "flow": {"hidden": 8, "layers": 1, "couplings": 2},
    },
    "train": {"epochs": 4, "steps_per_epoch": 2, "batch": 8, "lr": 0.01, "checkpoint_every": 1},
}


@pytest.fixture(scope="module")
def sphere(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = sphere_points(rng.uniform(-90, 90, 60), rng.uniform(-180, 180, 60)).astype(np.float32)
    path = tmp_path_factory.mktemp("cg") / "sphere.npz"
    np.savez(path, x_train=x[:40], x_test=x[40:], name="sphere", d=3, m=2)
    return str(path)


def run(sphere, tmp_path, name):
    job = NS(
        input=NS(sphere=sphere, code=[train.__file__]),
        output=NS(runs=str(tmp_path / f"{name}.npz")),
        params=NS(settings=SETTINGS, seed=0, device="cpu", checkpoints=str(tmp_path / f"ckpt_{name}")),
        threads=1,
    )
    train.main(job)
    return job.output.runs


def test_interrupted_training_resumes_bit_for_bit(sphere, tmp_path, monkeypatch):
    reference = run(sphere, tmp_path, "reference")
    with interrupted_at(monkeypatch, 2) as hits, pytest.raises(Interrupted):
        run(sphere, tmp_path, "resumed")
    assert hits == [2]
    assert list((tmp_path / "ckpt_resumed").glob("*.pt"))
    same_arrays(reference, run(sphere, tmp_path, "resumed"))


def test_a_diverging_stack_is_recorded_not_raised(sphere, tmp_path, monkeypatch):
    def blow_up(model, batch):
        raise FloatingPointError("flow: non-finite loss at epoch 3")

    monkeypatch.setattr(train, "train", lambda *a, **k: blow_up(None, None))
    with np.load(run(sphere, tmp_path, "diverged")) as out:
        assert int(out["sphere__flow__raw__diverged"]) == 3
        assert np.isnan(out["sphere__flow__raw__samples"]).all()
