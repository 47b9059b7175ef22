"""GPU probe: LoDA's backbone with general and isolated LoRA branches on every linear layer, one GAO loss.

At full scale the paper uses a ViT-B/16; this workflow's model class is the MLP backbone of repro.learning.smallnets
with LoRA branches (repro.papers.loda.lora), built here at the configured widths on the full-scale input size.
"""

from __future__ import annotations

import torch

from repro.learning.smallnets import MLP
from repro.papers.loda.continual import criterion
from repro.papers.loda.gao import GAOOptimizer, gao_loss
from repro.papers.loda.lora import wrap_linears

BATCH_SIZE = 128
SIDE = {"mnist": 28, "mnist_5k": 28, "sklearn_digits": 8, "mfeat": 16}


def build(section: dict, device):
    side = SIDE.get(section.get("source"), 28)
    in_dim = side * (15 if section.get("source") == "mfeat" else side)
    model = MLP(in_dim, section["hidden"], 10)
    lora = section["lora"]
    gen = torch.Generator().manual_seed(0)
    for layer in wrap_linears(model).values():
        d_in = layer.base.weight.shape[1]
        for name, rank in (("general", lora["rank_general"]), ("isolated", lora["rank_isolated"])):
            basis = torch.linalg.qr(torch.randn(d_in, rank, generator=gen)).Q
            layer.add_branch(name, basis.T, rank, gen)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    gao = gao_loss(GAOOptimizer(torch.optim.Adam(params), params, lora["rho_max"]), criterion)

    def make_batch(size: int):
        return torch.rand(size, in_dim, device=device), torch.randint(0, 10, (size,), device=device)

    return model, make_batch, gao
