"""LoDA's train stage interrupted inside a task's training and rerun ends bit for bit where an uninterrupted run
ends; evaluate's exact checks run on its outputs; the GPU probe builds on the CPU with the default section."""

import numpy as np
import torch
import yaml
from interrupt import same_arrays
from test_special_resume import interrupt_and_resume, run_train, tiny_digits

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


def test_interrupted_training_resumes_to_the_same_arrays(tmp_path, monkeypatch):
    images = tiny_digits(tmp_path / "digits.npz")
    outputs = {"runs": "npz", "systems": "npz", "energies": "parquet", "meta": "json"}
    clean, resumed = interrupt_and_resume(
        monkeypatch, lambda name: run_train(train, SETTINGS, tmp_path, images, name, outputs)
    )
    same_arrays(clean.runs, resumed.runs)
    same_arrays(clean.systems, resumed.systems)
    checks = evaluate.exact_checks(dict(np.load(clean.systems)), 2, 1e-3)
    assert checks["bases_checked"] == 2 * len(SETTINGS["domains"])
    assert checks["isolated_max_principal_angle"] < 1e-6
    assert checks["recalibration_max_residual"] < 1e-8


def test_gpu_probe_builds_on_cpu_with_the_default_section(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["loda"]
    model, make_batch, loss = gpu_probe.build(section, torch.device("cpu"))
    loss(model, make_batch(2)).backward()
    assert any(p.grad is not None for p in model.parameters())
