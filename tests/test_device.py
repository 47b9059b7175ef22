"""Device choice, batch moves and mixed precision of the shared training loop, and benchmarks/gpu.py without CUDA."""

from __future__ import annotations

import sys
from collections import namedtuple
from pathlib import Path

import pytest
import torch

from repro.learning.training import train
from repro.workflow.config import load_config
from repro.workflow.device import autocast, pick_device, to_device

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import gpu  # noqa: E402


def test_to_device_moves_nested_tensors_and_keeps_containers():
    Pair = namedtuple("Pair", "x y")
    batch = {"a": torch.ones(2), "b": [torch.zeros(1), 3], "c": Pair(torch.ones(1), "name")}
    moved = to_device(batch, torch.device("cpu"))
    assert isinstance(moved["c"], Pair) and moved["c"].y == "name" and moved["b"][1] == 3
    assert all(t.device.type == "cpu" for t in (moved["a"], moved["b"][0], moved["c"].x))


def test_autocast_is_bf16_only_on_cuda():
    with autocast(torch.device("cpu"), "bf16"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
    with pytest.raises(ValueError, match="precision 'fp8'"):
        autocast(torch.device("cpu"), "fp8")


def _run(**kwargs) -> torch.Tensor:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    data = torch.randn(32, 4), torch.randn(32, 1)

    def batches(epoch):
        return [(data[0][i : i + 8], data[1][i : i + 8]) for i in range(0, 32, 8)]

    def loss(net, batch):
        return torch.nn.functional.mse_loss(net(batch[0]), batch[1])

    train(model, loss, batches, epochs=3, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), seed=1, **kwargs)
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_device_and_precision_options_leave_cpu_runs_bitwise_equal():
    plain = _run()
    assert torch.equal(plain, _run(device=pick_device("cpu"), precision="bf16"))
    assert torch.equal(plain, _run(device="cpu"))


def test_gpu_benchmark_without_cuda_says_so_and_exits_0(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu.main(["--steps", "1"]) == 0
    assert "no CUDA device" in capsys.readouterr().out


def test_gpu_probe_builds_a_training_step_on_the_cpu():
    """The probe's model, batch and loss fit together (at a reduced size; the benchmark uses the full one)."""
    section = gpu.full_config()["papers"]["nmrshift"]
    small = dict(section, model=dict(section["model"], width=32, layers=1, heads=4))
    probes, _ = gpu.discover_probes(["nmrshift"])
    model, batch, loss = probes["nmrshift"].build(small, torch.device("cpu"))
    value = loss(model, batch(2))
    value.backward()
    assert torch.isfinite(value) and all(p.grad is not None for p in model.head.parameters())
    assert gpu.peak_tflops("NVIDIA H200") == 989.0 and gpu.peak_tflops("Some GPU") is None


def test_mosaic_probe_counts_the_full_scale_channels_and_steps_on_a_small_grid():
    from repro.papers.mosaic.gpu_probe import build, channel_count

    config = load_config()
    era5 = gpu.full_config()["data"]["era5"]
    levels = len(era5["levels"])
    level_vars = [v for v in era5["variables"] if v in {"geopotential", "temperature", "specific_humidity"}]
    assert channel_count(era5) >= len(level_vars) * levels
    model, batch, loss = build(config["papers"]["mosaic"], torch.device("cpu"), config["data"]["era5"], (8, 16))
    value = loss(model, batch(1))
    value.backward()
    assert torch.isfinite(value)


def test_probe_discovery_finds_modules_and_names_the_gpu_papers_without_one():
    config = gpu.full_config()
    slugs = gpu.gpu_papers(config)
    assert {"mosaic", "nmrshift", "gpo"} <= set(slugs) and "talda" not in slugs and "geo-newf" not in slugs
    assert gpu.gpu_papers(load_config()) == [], "the embedded default runs on CPUs"
    probes, missing = gpu.discover_probes(slugs)
    assert set(probes) | set(missing) == set(slugs) and not set(probes) & set(missing)
    assert all(probe.batch_size > 0 and callable(probe.build) for probe in probes.values())


SMALL_GRIDS = {
    "gpo": {"resolution": 16},
    "flower": {"grid": (16, 32)},
    "pdrf": {"resolution": 16},
    "lwe": {},
    "pai-graphon": {},
    "poisson-eat": {},
    "biodynaspec": {},
}


@pytest.mark.parametrize("slug", sorted(SMALL_GRIDS))
def test_probes_step_with_the_default_model_on_a_small_grid(slug):
    """The probe's model, batch and loss fit together; the paper's own loss, finite, with gradients."""
    probes, _ = gpu.discover_probes([slug])
    model, batch, loss = probes[slug].build(load_config()["papers"][slug], torch.device("cpu"), **SMALL_GRIDS[slug])
    value = loss(model, batch(1))
    value.backward()
    assert torch.isfinite(value) and any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())
