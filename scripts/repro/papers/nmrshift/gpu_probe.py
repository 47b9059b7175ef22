"""NMRShift's training step at paper scale for benchmarks/gpu.py: the ShiftTransformer on 64-atom molecules.

64 atoms is NMRShiftDB2's largest molecule; half the slots are padding-or-carbon so masking is exercised.
"""

from __future__ import annotations

BATCH_SIZE = 64
ATOMS = 64


def build(section: dict, device):
    """(model, batch(size), loss) of one carbon-shift regression step at the section's width and depth."""
    import torch

    from repro.papers.nmrshift.model import build_model

    model = build_model(section["model"], "cls").to(device)

    def batch(size: int):
        numbers = torch.randint(1, 9, (size, ATOMS), device=device)
        numbers[:, ATOMS // 2 :] = torch.where(torch.rand(size, ATOMS // 2, device=device) < 0.3, 0, 6)
        return (
            numbers,
            torch.randn(size, ATOMS, 3, device=device) * 3,
            torch.zeros(size, dtype=torch.long, device=device),
        )

    def loss(net, b):
        numbers, coords, solvent = b
        pred = net(numbers, coords, solvent)
        return ((pred - 1.0) ** 2 * (numbers > 0)).mean()

    return model, batch, loss
