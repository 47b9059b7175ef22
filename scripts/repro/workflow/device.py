"""Choose the compute device by asking torch, never by reading the environment.

On the test Slurm cluster fake GPUs set ``CUDA_VISIBLE_DEVICES`` while no CUDA device
exists, so only ``torch.cuda.is_available()`` is trusted.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch


def pick_device(requested: str = "auto") -> torch.device:
    """Return the device for ``requested`` ('auto', 'cpu', 'cuda', 'cuda:N').

    'auto' takes CUDA when torch sees a device and the CPU otherwise; an explicit
    'cuda' request on a machine without one raises instead of silently using the CPU.
    """
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(requested)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {requested!r} requested but torch sees no CUDA device")
    return device


def to_device(batch: Any, device: torch.device) -> Any:
    """``batch`` with every tensor in it (nested tuples, lists, dicts) on ``device``; other values unchanged.

    Host-to-GPU copies are asynchronous from pinned memory (``non_blocking``), a no-op on the CPU.
    """
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        moved = [to_device(v, device) for v in batch]
        return type(batch)(*moved) if hasattr(batch, "_fields") else type(batch)(moved)
    return batch


PRECISIONS = ("fp32", "bf16")


def autocast(device: torch.device, precision: str = "fp32") -> contextlib.AbstractContextManager:
    """Mixed precision for the forward pass: bf16 autocast on CUDA when asked, nothing otherwise.

    CPU runs stay in float32 whatever is asked, so they remain bitwise repeatable (CPU autocast would
    change the numbers from one torch build to the next).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r} not in {PRECISIONS}")
    if precision == "bf16" and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()
