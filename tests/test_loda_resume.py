"""LoDA's train stage interrupted inside a task's training and rerun ends bit for bit where an uninterrupted run
ends; evaluate's exact checks run on its outputs; the GPU probe builds on the CPU with the default section."""

from types import SimpleNamespace as NS

import numpy as np
import pytest
import torch
import yaml
from interrupt import Interrupted, interrupted_at
from test_special_resume import tiny_digits

from repro.papers.loda import evaluate, gpu_probe, train

SETTINGS = {
    "source": "sklearn_digits",
    "domains": ["rotate:30", "invert"],
    "data_seed": 0,
    "hidden": [8],
    "seeds": [0],
    "pretrain": {"epochs": 2, "batch_size": 8, "lr": 0.01},
    "methods": ["loda", "inflora", "seq_lora"],
    "lora": {
        "rank_general": 2,
        "rank_isolated": 2,
        "epochs": 3,
        "batch_size": 8,
        "lr": 0.01,
        "rho_max": 0.05,
        "w_general": 0.5,
        "eps": 1e-3,
        "null_threshold": 0.95,
    },
}


def run(tmp_path, images, name):
    out = NS(
        **{
            k: str(tmp_path / f"{name}_{k}.{ext}")
            for k, ext in (("runs", "npz"), ("systems", "npz"), ("energies", "parquet"), ("meta", "json"))
        }
    )
    job = NS(
        input=NS(images=images, code=[train.__file__]),
        output=out,
        params=NS(settings=SETTINGS, seed=0, checkpoints=str(tmp_path / f"ckpt_{name}")),
        threads=1,
    )
    train.main(job)
    return out


def test_interrupted_training_resumes_to_the_same_arrays(tmp_path, monkeypatch):
    images = tiny_digits(tmp_path / "digits.npz")
    clean = run(tmp_path, images, "clean")
    with interrupted_at(monkeypatch, 2) as hits, pytest.raises(Interrupted):
        run(tmp_path, images, "resumed")
    assert hits
    resumed = run(tmp_path, images, "resumed")
    for key in ("runs", "systems"):
        with np.load(getattr(clean, key)) as a, np.load(getattr(resumed, key)) as b:
            assert sorted(a.files) == sorted(b.files)
            for f in a.files:
                assert np.array_equal(a[f], b[f]), f
    checks = evaluate.exact_checks(dict(np.load(clean.systems)), 2, 1e-3)
    assert checks["bases_checked"] == 2 * len(SETTINGS["domains"])
    assert checks["isolated_max_principal_angle"] < 1e-6
    assert checks["recalibration_max_residual"] < 1e-8


def test_gpu_probe_builds_on_cpu_with_the_default_section(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["loda"]
    model, make_batch, loss = gpu_probe.build(section, torch.device("cpu"))
    loss(model, make_batch(2)).backward()
    assert any(p.grad is not None for p in model.parameters())
