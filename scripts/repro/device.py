"""Choose the compute device by asking torch, never by reading the environment.

On the test Slurm cluster fake GPUs set ``CUDA_VISIBLE_DEVICES`` while no CUDA device
exists, so only ``torch.cuda.is_available()`` is trusted.
"""

from __future__ import annotations

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
