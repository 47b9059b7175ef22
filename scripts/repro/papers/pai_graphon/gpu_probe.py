"""PAI-graphon's train-stage step at paper scale for benchmarks/gpu.py: the pruned network it trains.

The bias-free MLP of repro.papers.pai_graphon.model at ``ntk.width`` with one output (the synthetic task is
binary), 64 inputs, pruned at ``density`` by a random mask (the mask's pattern does not change the cost of the
dense masked products), the binary cross-entropy of training. Not in the step's device memory: each run's
empirical NTK, whose Jacobian is ``ntk.points`` x the weights (512 x 295,424 floats, 0.6 GB at full scale,
twice that while its blocks are joined), under 2 % of the device.
"""

from __future__ import annotations

BATCH_SIZE = 128
INPUTS, OUTPUTS = 64, 1
STAGE = "train"  # workflow/rules/pai-graphon.smk: one job (no wildcards), every criterion x density x seed


def build(section: dict, device):
    """(model, batch(size), loss): a module holding the weight tensors and fixed masks, the training loss."""
    import torch

    from repro.papers.pai_graphon import model as mlp

    width = section["ntk"]["width"]
    weights = mlp.init_weights(INPUTS, width, OUTPUTS, seed=0)
    generator = torch.Generator().manual_seed(0)
    masks = [(torch.rand(w.shape, generator=generator) < section["density"]).float() for w in weights]

    class Masked(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = torch.nn.ParameterList(torch.nn.Parameter(w) for w in weights)
            for i, m in enumerate(masks):
                self.register_buffer(f"mask{i}", m)

        def forward(self, x):
            return mlp.forward(list(self.weights), x, [getattr(self, f"mask{i}") for i in range(len(masks))])

    net = Masked().to(device)

    def batch(size: int):
        return torch.randn(size, INPUTS, device=device), torch.randint(2, (size,), device=device)

    def loss(model, b):
        x, y = b
        return mlp.loss_fn(model(x), y)

    return net, batch, loss


def step_macs(width: int, outputs: int) -> int:
    """Multiply-accumulates of one sample's forward + backward through the bias-free MLP INPUTS -> width ->
    width -> outputs: every layer's product, its weight gradient and, past the first layer (the inputs need
    no gradient), its input gradient. Masked weights are multiplied densely, so the density does not enter."""
    layers = [INPUTS * width, width * width, width * outputs]
    return 3 * sum(layers) - layers[0]


def work(section: dict) -> tuple[int, int]:
    """(samples, batch) of the train job, in samples of the probe's step (width ``ntk.width``, one output).

    The job runs, for each of ``ntk.seeds``, the dense network and every (criterion, density) of ``criteria``
    x ``ntk.densities``; each run trains the width-``ntk.width`` network for ``ntk.steps`` steps of
    ``ntk.train_batch`` samples, and first builds the empirical NTK on ``ntk.points`` inputs: one forward and an
    input-gradient-only backward, then J J^T (points^2 x weights multiply-accumulates, as large as a third of the
    training at full scale), counted by its multiply-accumulates over :func:`step_macs` of the probe. Left out
    (under 1 %): the SNIP / GraSP scoring passes on ``batch_size`` samples, the centring and alignment
    (points^3), the accuracy forwards over the test split. Batch ``ntk.train_batch``."""
    cfg = section["ntk"]
    width, points = int(cfg["width"]), int(cfg["points"])
    n_weights = INPUTS * width + width * width + width * OUTPUTS
    runs = len(cfg["seeds"]) * (1 + len(section["criteria"]) * len(cfg["densities"]))
    training = int(cfg["steps"]) * int(cfg["train_batch"])
    kernel = points * (n_weights + width * width + width) + points * points * n_weights
    return round(runs * (training + kernel / step_macs(width, OUTPUTS))), int(cfg["train_batch"])
