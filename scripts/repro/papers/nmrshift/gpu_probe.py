"""NMRShift's training step at paper scale for benchmarks/gpu.py: the ShiftTransformer on 64-atom molecules.

64 atoms is NMRShiftDB2's largest molecule; half the slots are padding-or-carbon so masking is exercised.
"""

from __future__ import annotations

BATCH_SIZE = 64
ATOMS = 64
STAGE = "train"  # workflow/rules/nmrshift.smk: at full scale one job per (nucleus, variant) (jobs.train: per_run)


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


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of the largest train job: for each fold of its variant, ``epochs`` x ``steps_per_epoch``
    steps, each of ``batch_labelled`` labelled molecules (a variant that uses labels) and ``batch_unlabelled``
    unlabelled ones (a variant with an unlabelled fraction; repro.papers.nmrshift.train.fit); a HOSE variant
    trains nothing. Molecules counted at the probe's 64 atoms, the largest. Batch: both parts of a step."""
    tr = section["train"]
    b1, b2 = tr["batch_labelled"], tr["batch_unlabelled"]
    jobs = [
        len(v.get("folds", section["folds"]))
        * tr["epochs"]
        * tr["steps_per_epoch"]
        * (b1 * bool(v["labelled"]) + b2 * (v["unlabelled_fraction"] > 0))
        for v in section["variants"].values()
        if v.get("method", "model") != "hose"
    ]
    return max(jobs), b1 + b2
