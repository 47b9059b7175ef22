"""FLOPs and device memory of one training step at paper-scale model sizes, counted without a GPU.

The cost benchmark (benchmarks/full_scale_cost.py) cannot time a GPU stage from CPU runs at rehearsal sizes:
there its CPU seconds are mostly Python, and sizes a fixture fixes never walk. What does determine a training
stage's device time and memory is its step at paper-scale sizes, which a paper's ``gpu_probe`` builds (the
paper's own model class and loss, the batch's full-scale shapes). This module runs that step on the ``meta``
device (shapes only: no memory, no arithmetic, seconds for a 100 M-parameter model) under two dispatch modes:

- torch's ``FlopCounterMode``: FLOPs of matmuls, convolutions and attention, forward and backward;
- ``LiveBytes``: the bytes of every storage an operator creates, from its creation until it is freed (a weak
  reference to the storage), and their peak. Eager PyTorch frees a tensor when its last reference goes, on
  the device as on meta, so the peak is the step's: activations kept for the backward pass, the recompute of
  checkpointed blocks, temporaries, the gradients as they appear.

It counts at the stage's own batch size (on meta that costs nothing per element): where activations
and gradients peak depends on the batch, so the peak is no line through small batches. A step whose code needs
values (``.item()``, ``nonzero``, a CPU generator) is counted on the CPU instead, at no more than ``CPU_BATCH``
samples (the small models of such papers run there in seconds). Training memory = the weights and AdamW's two moments (12 bytes per float32
parameter; the gradients are in the live peak) + that peak. Counted at float32 (a bf16 autocast stage keeps
some activations at half: the estimate errs high); the caching allocator's fragmentation and the CUDA context
are left out (the benchmark adds the context).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode

WEIGHT_AND_MOMENTS_BYTES = 12  # float32 weight + AdamW's two moments, per parameter
CPU_BATCH = 64  # the most samples the CPU fallback computes (syngr's step at its batch of 2,048 took 8 min)


class LiveBytes(TorchDispatchMode):
    """Bytes of the storages operators create while the mode is active, now and at their peak."""

    def __init__(self) -> None:
        super().__init__()
        self.now = self.peak = 0
        self._live: set[int] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self._track(t.untyped_storage())
        return out

    def _track(self, storage: torch.UntypedStorage) -> None:
        key = storage._cdata
        if key in self._live:  # a view, or an in-place op's result: no new storage
            return
        size = storage.nbytes()
        self._live.add(key)
        self.now += size
        self.peak = max(self.peak, self.now)
        weakref.finalize(storage, self._free, key, size)

    def _free(self, key: int, size: int) -> None:
        self._live.discard(key)
        self.now -= size


@dataclass(frozen=True)
class StepCount:
    """One forward + backward of a probe's step at ``batch`` samples."""

    flops_per_sample: float
    peak_live_bytes: int
    params: int
    batch: int
    counted_on: str

    def device_bytes(self) -> float:
        """Device memory of training at this batch (without the CUDA context)."""
        return self.params * WEIGHT_AND_MOMENTS_BYTES + self.peak_live_bytes

    def as_dict(self) -> dict:
        return asdict(self)


def _count(build: Callable, section: dict, device: str, batch: int) -> StepCount:
    """The step at ``batch``; the batch is made inside the modes (its tensors are the step's). Two passes:
    FlopCounterMode's module tracking keeps tensors alive (a checkpointed model's peak read 12x too high
    under it)."""
    flops = _flops(build, section, device, batch)
    live = LiveBytes()
    model, make_batch, loss = build(section, torch.device(device))
    with live:
        loss(model, make_batch(batch)).backward()
    return StepCount(
        flops_per_sample=flops,
        peak_live_bytes=int(live.peak),
        params=int(sum(p.numel() for p in model.parameters())),
        batch=batch,
        counted_on=device,
    )


def _flops(build: Callable, section: dict, device: str, batch: int) -> float:
    """FLOPs per sample of the step (forward + backward) under torch's counter."""
    counter = FlopCounterMode(display=False)
    model, make_batch, loss = build(section, torch.device(device))
    with counter:
        loss(model, make_batch(batch)).backward()
    return float(counter.get_total_flops()) / batch


def count_step(build: Callable, section: dict, batch: int, device: str | None = None) -> StepCount:
    """The probe's step (``build(section, device)`` -> model, make_batch, loss) at ``batch`` counted on
    ``device``: by default ``meta``, or the CPU where the step needs values that meta tensors do not have. The
    CPU computes, so it counts at most ``CPU_BATCH`` samples and scales the peak to ``batch`` in proportion (its
    fixed part, the gradients, scaled too: errs high). A job's other arms (a probe's ``arms``: other models,
    tasks or losses trained in the same job) are counted on the device their probe's step was: attention's
    FLOPs differ between meta (the fused kernel's count) and the CPU (its decomposed matmuls), by 10 % in
    imgcot's LM."""
    if device is None:
        try:
            return _count(build, section, "meta", batch)
        except (RuntimeError, NotImplementedError, TypeError, ValueError):
            device = "cpu"
    if device == "meta":
        return _count(build, section, "meta", batch)
    counted = _count(build, section, device, min(batch, CPU_BATCH))
    return replace(counted, peak_live_bytes=int(counted.peak_live_bytes * batch / counted.batch), batch=batch)
