"""JanusPipe's stages: a killed training resumes bit for bit; the real gloo pipeline equals monolithic autograd."""

from types import SimpleNamespace as NS

import pytest
import torch

from repro.papers.januspipe import data, pipeline, train
from repro.workflow.io import read_json

SETTINGS = {
    "generate": {"seed": 0, "kinds": ["Cu", "Ni"], "per_kind": 4, "strain": 0.03, "rattle": 0.1, "test_fraction": 0.25},
    "model": {"n_radial": 4, "cutoff": 3.2, "width": 8, "layers": 4},
    "train": {
        "epochs": 4,
        "batch_size": 3,
        "lr": 0.003,
        "weights": {"energy": 1.0, "forces": 10.0},
        "checkpoint_every": 1,
    },
    "costs": {"micro_batch": 2, "repeats": 2},
    "simulate": {"devices": 2, "micro_batches": 3, "wave": 2},
    "pipeline": {"processes": 2, "micro_batches": 3, "micro_batch": 2, "steps": 3, "wave": 2, "lr": 0.001},
}


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("januspipe")
    out = NS(configs=str(folder / "configs.npz"), manifest=str(folder / "manifest.json"))
    data.main(NS(params=NS(settings=SETTINGS), output=out))
    return out.configs


def run_train(configs, folder, checkpoint):
    out = NS(model=str(folder / "model.pt"), summary=str(folder / "train.json"))
    train.main(
        NS(params=NS(settings=SETTINGS, seed=0), input=NS(configs=configs), output=out), checkpoint=str(checkpoint)
    )
    return torch.load(out.model, weights_only=False)["state"]


def test_training_interrupted_inside_the_loop_resumes_bit_for_bit(configs, tmp_path, monkeypatch):
    reference = run_train(configs, tmp_path / "a", tmp_path / "a.ckpt")
    original = train.epoch_rng

    def failing(seed, epoch):
        if epoch == 2:
            raise KeyboardInterrupt("killed")
        return original(seed, epoch)

    monkeypatch.setattr(train, "epoch_rng", failing)
    with pytest.raises(KeyboardInterrupt):
        run_train(configs, tmp_path / "b", tmp_path / "b.ckpt")
    monkeypatch.setattr(train, "epoch_rng", original)
    resumed = run_train(configs, tmp_path / "b", tmp_path / "b.ckpt")
    for key in reference:
        assert torch.equal(reference[key], resumed[key]), key


def test_two_process_gloo_pipeline_equals_monolithic_autograd(configs, tmp_path):
    model = run_train(configs, tmp_path, tmp_path / "ckpt")
    assert model
    out = NS(costs=str(tmp_path / "costs.json"), pipeline=str(tmp_path / "pipeline.json"))
    inputs = NS(configs=configs, model=str(tmp_path / "model.pt"))
    pipeline.main(NS(params=NS(settings=SETTINGS, seed=0), input=inputs, output=out))
    result = read_json(out.pipeline)
    assert set(result["plans"]) == {"1f1b", "janus"}
    for plan in result["plans"].values():
        assert plan["force_max_abs_error"] <= 1e-12
        assert plan["grad_max_rel_error"] <= 1e-10
        assert plan["final_weight_max_rel_error"] <= 1e-10
        assert plan["throughput_structures_per_s"] > 0
    assert result["plans"]["janus"]["devices"] == [0, 1, 1, 0]
