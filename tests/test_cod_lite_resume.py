"""CoD-Lite training interrupted inside its loop (codec, teachers or the DMD student) and rerun ends bit for bit
where an uninterrupted run ends; the VQ and DMD pieces behave; the GPU probe builds and steps on the CPU."""

import contextlib
from types import SimpleNamespace as NS

import numpy as np
import pytest
import torch
import yaml
from interrupt import Interrupted, interrupted_at, same_arrays

import repro.learning.training
from repro.papers.cod_lite import data, gpu_probe, model, train

SETTINGS = {
    "model": {
        "width": 8,
        "latent": 2,
        "ds": 8,
        "bits": 4,
        "pretrain_bits": 2,
        "blocks": 1,
        "denoiser_blocks": 1,
        "patch": 4,
        "disc_width": 4,
    },
    "train": {
        "batch": 8,
        "lr": 0.003,
        "beta": 0.25,
        "group_chunks": 2,
        "ae_epochs": 2,
        "pretrain_epochs": 1,
        "finetune_epochs": 1,
        "distill": {"epochs": 2, "lr": 0.001, "fake_lr": 0.001, "disc_lr": 0.001, "adv_weight": 0.1, "rec_weight": 1.0},
    },
    "sampler_steps": 2,
    "teacher_steps": [1, 2],
    "timing": {"repeats": 2, "height": 16, "width": 24},
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("cod")
    rng = np.random.default_rng(0)
    writer = data.CropWriter(root / "crops.zarr", 24, 16, 8)
    writer.add(rng.integers(0, 256, (24, 16, 16, 3), dtype=np.uint8))
    writer.close()
    np.savez(
        root / "test.npz",
        ids=np.array(["a", "b"]),
        **{
            "img/a": rng.integers(0, 256, (16, 24, 3), dtype=np.uint8),
            "img/b": rng.integers(0, 256, (20, 16, 3), dtype=np.uint8),
        },
    )
    return root


def run(inputs, out) -> str:
    out.mkdir(exist_ok=True)
    job = NS(
        input=NS(crops=str(inputs / "crops.zarr"), test=str(inputs / "test.npz")),
        output=NS(recon=str(out / "s0.npz"), training=str(out / "s0.json")),
        wildcards=NS(s="0"),
        params=NS(settings=SETTINGS, seed=0, device="cpu"),
    )
    train.main(job)
    return job.output.recon


@contextlib.contextmanager
def interrupted_at_call(monkeypatch, call: int):
    """Raise Interrupted at the ``call``-th epoch start over all fits (8 = the DMD student's second epoch:
    codec 2, four teacher fits 1 each, distillation 2)."""
    original = repro.learning.training.seed_epoch
    count = []

    def seed_epoch(seed: int, e: int) -> None:
        count.append(e)
        if len(count) == call:
            raise Interrupted(f"interrupted at call {call}")
        original(seed, e)

    with monkeypatch.context() as m:
        m.setattr(repro.learning.training, "seed_epoch", seed_epoch)
        yield count


@pytest.mark.parametrize("fit", ["codec", "distill"])
def test_interrupted_training_resumes_bit_for_bit(inputs, tmp_path, monkeypatch, fit):
    reference = run(inputs, tmp_path / "reference")
    context = interrupted_at(monkeypatch, 1) if fit == "codec" else interrupted_at_call(monkeypatch, 8)
    with context as hits, pytest.raises(Interrupted):
        run(inputs, tmp_path / "resumed")
    assert hits[-1] == 1
    assert list((tmp_path / "resumed" / "checkpoints").glob("*.pt")), "no checkpoint before the interruption"
    resumed = run(inputs, tmp_path / "resumed")
    same_arrays(reference, resumed)
    assert not list((tmp_path / "resumed" / "checkpoints").glob("*.pt")), "checkpoints left after the output"
    with np.load(resumed) as out:
        assert out["b/mse"].shape == (20, 16, 3)  # whole image, padded for coding and cropped back
        assert int(out["b/payload_bits"]) == 4 * 3 * 2 and int(out["b/mismatches"]) == 0


def test_vector_quantiser_picks_the_nearest_entry_and_passes_gradients_straight_through():
    vq = model.VectorQuantiser(2, 2)
    with torch.no_grad():
        vq.codebook.copy_(torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    y = torch.tensor([[[[0.9, 0.1]], [[0.2, 0.8]]]], requires_grad=True)  # (1, 2, 1, 2): two vectors
    q, idx, loss = vq(y, 0.25)
    assert idx.tolist() == [[[1, 2]]]
    assert torch.allclose(q, vq.embed(idx)) and loss > 0
    q.sum().backward()
    assert torch.allclose(y.grad, torch.ones_like(y))


def test_dmd_student_gradient_follows_fake_minus_real():
    """With the fake score equal to the teacher the DMD term is zero: the student then moves only by its
    reconstruction and adversarial terms."""
    torch.manual_seed(0)
    net = model.Denoiser(8, 2, 8, 1, 4)
    distiller = train.Distiller(net, model.Denoiser(8, 2, 8, 1, 4), model.Discriminator(4, 2))
    distiller.fake.load_state_dict(net.state_dict())
    teacher = model.Denoiser(8, 2, 8, 1, 4)
    teacher.load_state_dict(net.state_dict())
    x = torch.rand(2, 3, 16, 16) * 2 - 1

    def cond(x):
        return torch.randn(len(x), 2, 2, 2, generator=torch.Generator().manual_seed(1))

    cfg = {"adv_weight": 0.0, "rec_weight": 0.0}
    torch.manual_seed(3)
    loss = train.dmd_loss(teacher, cond, cfg)(distiller, (x,))
    loss.backward()
    grads = [p.grad for p in distiller.student.parameters() if p.grad is not None]
    assert all(float(g.abs().max()) < 1e-6 for g in grads)  # fake == real: no DMD gradient
    assert any(p.grad is not None and float(p.grad.abs().max()) > 0 for p in distiller.disc.parameters())


def test_gpu_probe_steps_on_cpu(repo):
    section = yaml.safe_load((repo / "config/config.yaml").read_text())["papers"]["cod-lite"]
    net, make_batch, loss = gpu_probe.build(section, "cpu")
    value = loss(net, make_batch(2))
    value.backward()
    assert np.isfinite(float(value.detach()))
    assert all(p.grad is not None for p in net.parameters())
