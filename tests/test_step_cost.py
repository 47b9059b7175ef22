"""The training-step counter of the cost benchmark's work model, against FLOPs and bytes computed by hand."""

from __future__ import annotations

import gc

import pytest
import torch
from torch.utils.checkpoint import checkpoint

from repro.learning.step_cost import WEIGHT_AND_MOMENTS_BYTES, LiveBytes, count_step

IN, HIDDEN, OUT = 12, 20, 3


def two_layers(section: dict, device):
    """Linear -> tanh -> Linear, squared loss; ``section['item']`` makes the loss read a value (meta cannot)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.Tanh(), torch.nn.Linear(HIDDEN, OUT)).to(device)

    def make_batch(size: int):
        return torch.randn(size, IN, device=device)

    def loss(net, x):
        value = net(x).pow(2).mean()
        return value / value.detach().item() if section.get("item") else value

    return model, make_batch, loss


class Deep(torch.nn.Module):
    """``depth`` blocks (width -> 4 width -> tanh -> width); with ``recompute`` each block is checkpointed."""

    def __init__(self, depth: int, width: int, recompute: bool):
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.Tanh(), torch.nn.Linear(4 * width, width))
            for _ in range(depth)
        )
        self.recompute = recompute

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if self.recompute else block(x)
        return x


def deep(depth: int, width: int, recompute: bool):
    def build(section: dict, device):
        model = Deep(depth, width, recompute).to(device)
        return model, lambda size: torch.randn(size, width, device=device), lambda net, x: net(x).pow(2).mean()

    return build


def test_flops_are_the_matmuls_of_forward_and_backward():
    """Forward 2 (IN H + H OUT) per sample; backward: both weight gradients (2 IN H, 2 H OUT) and the hidden
    layer's input gradient (2 H OUT), not the input's (the data needs none)."""
    count = count_step(two_layers, {}, 8)
    forward = 2 * (IN * HIDDEN + HIDDEN * OUT)
    backward = 2 * IN * HIDDEN + 2 * HIDDEN * OUT + 2 * HIDDEN * OUT
    assert count.counted_on == "meta"
    assert count.flops_per_sample == forward + backward
    assert count.params == IN * HIDDEN + HIDDEN + HIDDEN * OUT + OUT


def test_live_bytes_follow_creation_and_release_and_views_are_free():
    with LiveBytes() as live:
        a = torch.empty(1000, device="meta")
        b = torch.empty(500, device="meta")
        view = a[:10].view(2, 5)
        assert live.now == 6000
        del a, view
        gc.collect()
        assert live.now == 2000
        del b
        gc.collect()
    assert live.now == 0 and live.peak == 6000


def test_memory_per_sample_is_the_kept_activations():
    """At a batch where activations dominate, the peak holds what each block keeps for the backward pass (its
    input and its hidden tanh output: 5 width floats per sample) and the output: at least that, and not more
    than twice that plus the weights' gradients (transients of one block)."""
    depth, width, batch = 6, 128, 4096
    count = count_step(deep(depth, width, recompute=False), {}, batch)
    params = depth * (8 * width * width + 5 * width)
    kept = (5 * depth + 1) * width * 4 * batch
    assert kept <= count.peak_live_bytes <= 2 * kept + 4 * params
    assert count.device_bytes() == params * WEIGHT_AND_MOMENTS_BYTES + count.peak_live_bytes


def test_checkpointed_blocks_trade_memory_for_their_recompute():
    """Checkpointing every block keeps only the blocks' inputs (the hidden 4 width is recomputed in the
    backward pass): the peak falls, and the FLOPs rise by the recompute, exactly: torch's checkpoint stops
    recomputing once it has what the backward needs (the tanh output), so one more first matmul per block
    (2 x 4 width^2 per sample), not the second."""
    depth, width, batch = 6, 128, 4096
    plain = count_step(deep(depth, width, recompute=False), {}, batch)
    recomputed = count_step(deep(depth, width, recompute=True), {}, batch)
    assert recomputed.peak_live_bytes < 0.75 * plain.peak_live_bytes
    assert recomputed.flops_per_sample - plain.flops_per_sample == depth * 8 * width * width


def test_a_step_that_reads_values_is_counted_on_the_cpu_with_the_same_flops():
    meta = count_step(two_layers, {}, 8)
    cpu = count_step(two_layers, {"item": True}, 8)
    assert cpu.counted_on == "cpu"
    # the loss's scalar division adds no matmul: the same count per sample
    assert cpu.flops_per_sample == pytest.approx(meta.flops_per_sample)


def test_a_step_is_counted_on_the_device_asked_for():
    """A job's arms are counted on the device their probe's step was: asked for the CPU, a step meta could count
    is counted on the CPU at no more than CPU_BATCH samples, its peak scaled to the batch (erring high). Two
    blocks of width w: per block 16 w^2 FLOPs forward (two matmuls of 4 w^2, 2 FLOPs each), as many for the weight gradients and
    for the input gradients, less the first matmul's input gradient (8 w^2: the data needs none)."""
    build = deep(2, 32, recompute=False)
    meta, cpu = count_step(build, {}, 256), count_step(build, {}, 256, "cpu")
    assert (meta.counted_on, cpu.counted_on, cpu.batch) == ("meta", "cpu", 256)
    assert meta.flops_per_sample == cpu.flops_per_sample == 2 * 48 * 32**2 - 8 * 32**2
    # the scaled peak scales the fixed part (the weights' gradients) too: it errs high, never low
    assert meta.peak_live_bytes <= cpu.peak_live_bytes <= 2 * meta.peak_live_bytes
    assert count_step(deep(2, 64, recompute=False), {}, 256).flops_per_sample == 4 * meta.flops_per_sample
