"""SPECIAL's train stage interrupted inside a group and rerun ends bit for bit where an uninterrupted run ends;
the GPU probe builds and backpropagates on the CPU with the default section."""

from types import SimpleNamespace as NS

import numpy as np
import pytest
import torch
import yaml
from interrupt import Interrupted, interrupted_at, same_arrays

from repro.papers.special import federated, gpu_probe, train
from repro.workflow.io import write_npz

SETTINGS = {
    "images": "unused: the job's input names the file",
    "source": "sklearn_digits",
    "image_size": [32, 32],
    "domains": ["rotate:0", "invert", "noise:0.3"],
    "data_seed": 0,
    "hidden": [8],
    "seeds": [0, 1],
    "protocol": {
        "clients": 4,
        "per_round": 2,
        "rounds": 2,
        "local_epochs": 1,
        "batch_size": 8,
        "lr": 0.2,
        "alpha": 0.5,
    },
    "mu": [1.0, 2.0],
    "main_mu": 1.0,
    "anchor": "round",
    "client_mu": 0.1,
    "replay_per_client": 2,
    "sweeps": {"per_round": [1], "rounds": [3]},
}


def tiny_digits(path, source: str = "sklearn_digits", n: int = 60, side: int = 8, seed: int = 0) -> str:
    """A digits npz in the canonical layout of repro.data.images (one source, uint8 images, 3 splits)."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 5
    images = (rng.random((n, side, side)) * 60 + labels[:, None, None] * 35).astype(np.uint8)
    split = np.array(["train", "train", "test"] * (n // 3))
    write_npz(path, {f"{source}/images": images, f"{source}/labels": labels.astype(np.int64), f"{source}/split": split})
    return str(path)


def run_train(module, settings: dict, tmp_path, images: str, name: str, outputs: dict[str, str]) -> NS:
    """Run a paper's train stage on ``images``; outputs are ``<name>_<key>.<ext>`` under ``tmp_path``."""
    out = NS(**{key: str(tmp_path / f"{name}_{key}.{ext}") for key, ext in outputs.items()})
    job = NS(
        input=NS(images=images, code=[module.__file__]),
        output=out,
        params=NS(settings=settings, seed=0, checkpoints=str(tmp_path / f"ckpt_{name}")),
        threads=1,
    )
    module.main(job)
    return out


def interrupt_and_resume(monkeypatch, run, epoch: int = 2) -> tuple[NS, NS]:
    """Outputs of a clean run and of a run interrupted at ``epoch`` of the shared loop, then rerun."""
    clean = run("clean")
    with interrupted_at(monkeypatch, epoch) as hits, pytest.raises(Interrupted):
        run("resumed")
    assert hits
    return clean, run("resumed")


def run(tmp_path, images: str, name: str) -> NS:
    return run_train(train, SETTINGS, tmp_path, images, name, {"runs": "npz", "meta": "json"})


def test_interrupted_run_resumes_to_the_same_bytes(tmp_path, monkeypatch):
    images = tiny_digits(tmp_path / "digits.npz")
    clean = run(tmp_path, images, "clean")
    original = federated.Population.run
    calls = []

    def failing(self, tasks, inits):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("killed in the second group")
        return original(self, tasks, inits)

    monkeypatch.setattr(federated.Population, "run", failing)
    with pytest.raises(RuntimeError, match="killed"):
        run(tmp_path, images, "resumed")
    assert list((tmp_path / "ckpt_resumed").glob("*_main.npz")), "the finished group was kept"
    monkeypatch.setattr(federated.Population, "run", original)
    resumed = run(tmp_path, images, "resumed")
    same_arrays(clean.runs, resumed.runs)
    assert not (tmp_path / "ckpt_resumed").exists()


def test_gpu_probe_builds_on_cpu_with_the_default_section(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["special"]
    model, make_batch, loss = gpu_probe.build(section, torch.device("cpu"))
    loss(model, make_batch(2)).backward()
    assert all(p.grad is not None for p in model.parameters())
