"""BioDynaSpec's training step at paper scale for benchmarks/gpu.py: slot diffusion over spectral windows.

The method's own network (IWFD spectral slots, band-autoregressive conditioning, IRFC attention bias) at the
section's width, depth, window and crop (residues per sample), with the training loss of ``SlotDiffusion``.
"""

from __future__ import annotations

BATCH_SIZE = 8
RESIDUE_TYPES = 20  # below the network's N_RESIDUE_TYPES (which adds an unknown type)
STAGE = "train"  # workflow/rules/biodynaspec.smk: at full scale one job per learned model (jobs.train: per_run)


def build(section: dict, device):
    """(model, batch(size), loss): the batches hold (anchor CA coordinates, residue types, normalised slots)."""
    import torch

    from repro.papers.biodynaspec.registry import build_network, n_slots

    model = build_network("biodynaspec", section).to(device)
    slots, features = n_slots("spectral", section["window"])
    residues = section["crop"]

    def batch(size: int):
        return (
            torch.randn(size, residues, 3, device=device) * 10,
            torch.randint(RESIDUE_TYPES, (size, residues), device=device),
            torch.randn(size, slots, residues, features, device=device),
        )

    def loss(net, b):
        return net.loss(*b)

    return model, batch, loss


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of one train job: ``epochs`` x ``batches_per_epoch`` batches of ``batch_size`` windows of
    ``crop`` residues (repro.papers.biodynaspec.train.make_batches), alike for every model's job. Counted on the
    method's own network: the jobs of its ablation without the IRFC bias and of the time-domain and flow
    baselines are costed as if they trained it. Left out: the validation of each epoch and the slot scales."""
    return section["epochs"] * section["batches_per_epoch"] * section["batch_size"], section["batch_size"]
