"""DDG-SFDA's train stage interrupted inside an adaptation and rerun ends bit for bit where an uninterrupted run
ends; the regression pairs are built as documented; the GPU probe builds on the CPU."""

import numpy as np
import pytest
import torch
import yaml
from interrupt import same_arrays
from test_special_resume import interrupt_and_resume, run_train, tiny_digits

from repro.papers.sfda_regression import gpu_probe, train
from repro.papers.sfda_regression.tasks import build_pair

ADAPT = {
    "bins": 5,
    "aux_weight": 0.5,
    "batch_size": 8,
    "source_lr": 0.003,
    "source_epochs": 2,
    "adapt_lr": 0.001,
    "adapt_epochs": 3,
    "aug_noise": 0.05,
    "aug_jitter": 0.1,
    "augmentations": 2,
    "neighbours": 3,
    "mix": 0.5,
    "ema": 0.99,
}
SETTINGS = {
    "source": "sklearn_digits",
    "data_seed": 0,
    "angles": [-30, 30],
    "transfers": {
        "rot_noise": {"target": "rotation", "shift": "noise:0.3"},
        "same": {"target": "thickness", "shift": "none"},
    },
    "hidden": [8, 4],
    "seeds": [0],
    "methods": ["source_only", "self_training", "feature_alignment", "ddg", "oracle"],
    "adapt": ADAPT,
}


def test_interrupted_adaptation_resumes_to_the_same_arrays(tmp_path, monkeypatch):
    images = tiny_digits(tmp_path / "digits.npz")
    clean, resumed = interrupt_and_resume(
        monkeypatch, lambda name: run_train(train, SETTINGS, tmp_path, images, name, {"runs": "npz", "meta": "json"})
    )
    same_arrays(clean.runs, resumed.runs)
    with np.load(clean.runs) as a:
        assert "rot_noise/ddg/0/histograms" in a.files and "same/ddg/0/pred" in a.files


def test_pairs_split_the_train_images_and_normalise_with_the_source_range(tmp_path):
    images = tiny_digits(tmp_path / "digits.npz")
    pair = build_pair(images, "sklearn_digits", {"target": "rotation", "shift": "noise:0.3"}, (-30, 30), 0)
    assert len(pair.x_source) == len(pair.x_target) == 20 and len(pair.x_test) == 20
    assert pair.y_source.min() == 0.0 and pair.y_source.max() == pytest.approx(1.0)
    same = build_pair(images, "sklearn_digits", {"target": "rotation", "shift": "none"}, (-30, 30), 0)
    assert np.array_equal(same.x_source, pair.x_source) and not np.array_equal(same.x_target, pair.x_target)
    with pytest.raises(ValueError, match="regression target"):
        build_pair(images, "sklearn_digits", {"target": "age", "shift": "none"}, (-30, 30), 0)


def test_gpu_probe_builds_on_cpu_with_the_default_section(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["sfda-regression"]
    model, make_batch, loss = gpu_probe.build(section, torch.device("cpu"))
    loss(model, make_batch(2)).backward()
    assert all(p.grad is not None for p in model.parameters())
