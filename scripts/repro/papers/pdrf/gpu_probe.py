"""PDRF's training step at paper scale for benchmarks/gpu.py: SEVIR VIL nowcasting at the section's resolution.

The data-parameterised rectified flow with the deterministic teacher term (the method's own loss), frames in
and out as the section's radar settings give them.
"""

from __future__ import annotations

BATCH_SIZE = 8


def build(section: dict, device, resolution: int | None = None):
    """(model, batch(size), loss) of one PDRF step; ``resolution`` defaults to the section's radar resolution."""
    import torch

    from repro.papers.pdrf.train import Nowcaster, loss_fn

    radar, cfg = section["radar"], section["model"]
    n = resolution or radar["resolution"]
    frames_in, frames_out = radar["frames_in"], radar["frames_out"]
    model = Nowcaster("data", frames_in, frames_out, cfg["width"], cfg["levels"]).to(device)
    teacher = section["variants"]["pdrf"]["teacher"]

    def batch(size: int):
        """(sequences of frames_in + frames_out frames, the teacher's coarse target) on the 0-255 scale."""
        return (
            255 * torch.rand(size, frames_in + frames_out, n, n, device=device),
            255 * torch.rand(size, frames_out, n // 4, n // 4, device=device),
        )

    def loss(net, b):
        return loss_fn(net, b, teacher)

    return model, batch, loss
