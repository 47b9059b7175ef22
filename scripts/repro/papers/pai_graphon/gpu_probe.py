"""PAI-graphon's masked-network step at paper scale for benchmarks/gpu.py: the widest width of the sweep.

The bias-free MLP of repro.papers.pai_graphon.model at the section's largest width, pruned at its density
by a random mask (the mask's pattern does not change the cost of the dense masked products), 64 inputs
(the digits' features) and ten classes, cross-entropy as in training.
"""

from __future__ import annotations

BATCH_SIZE = 256
INPUTS, CLASSES = 64, 10


def build(section: dict, device):
    """(model, batch(size), loss): a module holding the weight tensors and fixed masks, the training loss."""
    import torch

    from repro.papers.pai_graphon import model as mlp

    width = max(section["widths"])
    weights = mlp.init_weights(INPUTS, width, CLASSES, seed=0)
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
        return torch.randn(size, INPUTS, device=device), torch.randint(CLASSES, (size,), device=device)

    def loss(model, b):
        x, y = b
        return mlp.loss_fn(model(x), y)

    return net, batch, loss
