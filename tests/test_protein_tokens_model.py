"""APT's mechanism: FSQ, nested dropout, token invariance, the two decoders, the resume guarantee, the GPU probe."""

import types

import numpy as np
import pytest
import torch
from interrupt import Interrupted, interrupted_at
from scipy.spatial.transform import Rotation

from repro.metrics.protein_geometry import build_backbone, rmsd
from repro.papers.protein_tokens import gpu_probe
from repro.papers.protein_tokens import train as pt_train
from repro.papers.protein_tokens.arrays import ArrayWriter, open_arrays, write_arrays
from repro.papers.protein_tokens.model import (
    FSQ,
    Autoencoder,
    kabsch_rmsd,
    nested_keep,
    prefix_keep,
    random_crop,
    round_ste,
    training_loss,
)
from repro.workflow.config import load_strict

CFG = {
    "width": 16,
    "layers": 1,
    "decoder_layers": 1,
    "heads": 2,
    "tokens": 4,
    "levels": [8, 5, 5, 5],
    "local_radius": 2,
}


def backbones(n=6, length=16, seed=0):
    rng = np.random.default_rng(seed)
    helix = np.deg2rad([-57.0, -47.0])
    out = [
        build_backbone(helix[0] + rng.normal(0, 0.3, length), helix[1] + rng.normal(0, 0.3, length)) for _ in range(n)
    ]
    return torch.from_numpy(np.stack(out)), torch.ones(n, length)


def test_fsq_codes_lie_on_the_grid_and_fill_every_level():
    fsq = FSQ([8, 5, 3])
    q = fsq(torch.randn(5000, 3) * 3)
    scaled = q * fsq.half_width
    torch.testing.assert_close(scaled, torch.round(scaled))
    assert [int(torch.unique(scaled[:, i]).numel()) for i in range(3)] == [8, 5, 3]
    assert fsq.bits == pytest.approx(np.log2(120))
    assert torch.unique(fsq.indices(q)).numel() <= 120


def test_straight_through_gradient_is_the_identity():
    x = torch.randn(100, requires_grad=True)
    round_ste(x * 3).sum().backward()
    torch.testing.assert_close(x.grad, torch.full_like(x, 3.0))


def test_nested_dropout_keeps_prefixes():
    torch.manual_seed(0)
    keep = nested_keep(500, 6)
    assert torch.all(keep[:, 0] == 1)
    assert torch.all(keep[:, 1:] <= keep[:, :-1])  # a kept token's predecessors are kept
    assert set(keep.sum(1).int().tolist()) == set(range(1, 7))


def test_random_crops_keep_a_leading_fraction_of_each_chain():
    torch.manual_seed(0)
    mask = torch.ones(400, 20)
    mask[:, 15:] = 0  # chains of 15 residues padded to 20
    cropped = random_crop(mask, 0.6)
    lengths = cropped.sum(1)
    assert lengths.min() >= 9 and lengths.max() <= 15 and lengths.unique().numel() > 3
    assert torch.all(cropped[:, 1:] <= cropped[:, :-1])  # a leading run, no holes


@pytest.mark.parametrize("kind", ["global", "local"])
def test_tokens_are_invariant_to_rigid_motions(kind):
    torch.manual_seed(0)
    model = Autoencoder(kind, CFG, 16).eval()
    bb, mask = backbones()
    rotation = torch.from_numpy(Rotation.random(random_state=3).as_matrix()).float()
    moved = bb @ rotation.T + torch.tensor([5.0, -3.0, 8.0])
    with torch.no_grad():
        diff = (model.tokenizer.pre_quantised(bb, mask) - model.tokenizer.pre_quantised(moved, mask)).abs().max()
    assert diff < 1e-4


def test_global_token_prefix_does_not_depend_on_later_tokens():
    torch.manual_seed(0)
    model = Autoencoder("global", CFG, 16).eval()
    bb, mask = backbones()
    with torch.no_grad():
        before = model.tokenizer.pre_quantised(bb, mask)
        model.tokenizer.readout.weight[-1] += 1.0  # change only how the last token reads the residues
        after = model.tokenizer.pre_quantised(bb, mask)
    torch.testing.assert_close(before[:, :-1], after[:, :-1])
    assert (before[:, -1] - after[:, -1]).abs().max() > 1e-3


def test_torch_kabsch_rmsd_matches_numpy_and_ignores_padding():
    bb, _ = backbones(3, 12)
    pred = bb[..., 1, :] + torch.randn(3, 12, 3)
    mask = torch.ones(3, 12)
    mask[0, 9:] = 0
    ours = kabsch_rmsd(pred.double(), bb[..., 1, :].double(), mask.double())
    for i in range(3):
        m = mask[i] > 0
        assert float(ours[i]) == pytest.approx(rmsd(pred[i, m].numpy(), bb[i, m, 1].numpy()), abs=1e-6)


def test_decoders_decode_any_length_and_the_flow_loss_trains():
    torch.manual_seed(0)
    bb, mask = backbones()
    for decoder in ("regression", "flow"):
        model = Autoencoder("global", CFG | {"flow_steps": 2}, 16, decoder)
        loss = training_loss(model, (bb, mask), True, 1.0, 0.1)
        loss.backward()
        assert torch.isfinite(loss)
        codes = model.tokenizer(bb, mask)
        small = torch.ones(len(bb), 12)
        assert model.decode(codes, prefix_keep(len(bb), 4, 2), small).shape == (len(bb), 12, 3, 3)


def test_interrupted_training_resumes_to_the_same_outputs(tmp_path, monkeypatch):
    bb, mask = backbones(12, 16)
    windows = {
        "backbone": bb.numpy(),
        "mask": mask.numpy(),
        "split": np.array([0] * 8 + [1] * 4, np.int8),
    }
    write_arrays(tmp_path / "windows", windows)
    settings = {
        "model": CFG,
        "loss": {"distance_weight": 1.0, "size_weight": 0.1, "min_crop": 0.6},
        "train": {"epochs": 3, "batch": 4, "lr": 0.003},
        "variants": ["apt"],
        "seeds": [0],
        "shrink": 0.75,
        "checks": {"windows": 2},
        "inference": {"batch": 3, "pca_fit_windows": 100, "probe_train_windows": 100},
    }

    def job(out):
        return types.SimpleNamespace(
            input=types.SimpleNamespace(windows=str(tmp_path / "windows")),
            output=types.SimpleNamespace(outputs=str(out / "outputs"), training=str(out / "training.json")),
            params=types.SimpleNamespace(settings=settings, seed=0, device="cpu"),
        )

    pt_train.main(job(tmp_path / "a"))
    with interrupted_at(monkeypatch, 2) as hits, pytest.raises(Interrupted):
        pt_train.main(job(tmp_path / "b"))
    assert hits == [2]
    pt_train.main(job(tmp_path / "b"))
    a, b = open_arrays(tmp_path / "a" / "outputs"), open_arrays(tmp_path / "b" / "outputs")
    assert sorted(a) == sorted(b) and all(np.array_equal(a[k], b[k]) for k in a)


def test_batched_decoding_equals_one_batch(tmp_path):
    """Streaming the held-out windows through the model in batches gives the one-batch decodes."""
    bb, mask = backbones(10, 16, seed=3)
    model = Autoencoder("global", CFG, 16).eval()
    whole = pt_train.decode_prefixes(model, bb.numpy(), mask.numpy(), [1, 2, 4])
    windows = {"backbone": bb.numpy(), "mask": mask.numpy(), "split": np.ones(10, np.int8)}
    writer = ArrayWriter(tmp_path / "out")
    settings = {"model": CFG, "shrink": 0.75}
    pt_train.stream(model, windows, np.arange(10), 4, writer, 0, "apt_no_nested", settings)
    writer.close()
    streamed = open_arrays(tmp_path / "out")["ca/apt_no_nested/0"]
    np.testing.assert_allclose(streamed[[0, 1, 3]], whole, atol=1e-5)


def test_gpu_probe_builds_a_training_step_on_the_cpu(repo):
    section = load_strict(repo / "config" / "config.yaml")["papers"]["protein-tokens"]
    model, make_batch, loss = gpu_probe.build(section, torch.device("cpu"))
    value = loss(model, make_batch(2))
    value.backward()
    assert torch.isfinite(value) and isinstance(gpu_probe.BATCH_SIZE, int)
    assert all(p.grad is not None for p in model.tokenizer.parameters())
