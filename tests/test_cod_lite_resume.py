"""CoD-Lite training interrupted inside its loop and rerun ends bit for bit where an uninterrupted run ends;
the GPU probe builds and steps on the CPU."""

from types import SimpleNamespace as NS

import numpy as np
import pytest
import yaml
from interrupt import Interrupted, interrupted_at, same_arrays

from repro.papers.cod_lite import gpu_probe, train

SETTINGS = {
    "model": {"width": 8, "latent": 2, "ds": 4, "levels": 3, "blocks": 1, "denoiser_blocks": 1, "patch": 4},
    "train": {
        "batch": 8,
        "lr": 0.003,
        "lambda_rate": 0.02,
        "ae_epochs": 2,
        "diffusion_epochs": 3,
        "generation_pretrain_epochs": 1,
        "distill_epochs": 2,
        "distill_lr": 0.001,
    },
    "sampler_steps": 2,
    "teacher_steps": [1, 2],
    "seeds": [0],
    "timing_repeats": 1,
}


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("cod") / "images.npz"
    np.savez(
        path,
        train=rng.integers(0, 256, (16, 16, 16, 3), dtype=np.uint8),
        test=rng.integers(0, 256, (2, 16, 16, 3), dtype=np.uint8),
        test_ids=np.array(["a", "b"]),
    )
    return str(path)


def run(images: str, out) -> str:
    out.mkdir(exist_ok=True)
    job = NS(
        input=NS(images=images),
        output=NS(recon=str(out / "recon.npz"), training=str(out / "training.json")),
        params=NS(settings=SETTINGS, seed=0, device="cpu"),
    )
    train.main(job)
    return job.output.recon


def test_interrupted_training_resumes_bit_for_bit(images, tmp_path, monkeypatch):
    reference = run(images, tmp_path / "reference")
    with interrupted_at(monkeypatch, 1) as hits, pytest.raises(Interrupted):
        run(images, tmp_path / "resumed")
    assert hits == [1]
    assert list((tmp_path / "resumed" / "checkpoints").glob("*.pt")), "no checkpoint before the interruption"
    resumed = run(images, tmp_path / "resumed")
    same_arrays(reference, resumed)
    assert not list((tmp_path / "resumed" / "checkpoints").glob("*.pt")), "checkpoints left after the output"


def test_gpu_probe_steps_on_cpu(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["cod-lite"]
    net, make_batch, loss = gpu_probe.build(section, "cpu")
    value = loss(net, make_batch(2))
    value.backward()
    assert np.isfinite(float(value.detach()))
    assert all(p.grad is not None for p in net.parameters())
