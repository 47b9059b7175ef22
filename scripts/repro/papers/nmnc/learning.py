"""Training an MLP by noise correlation: every hidden layer's weights get the local update
-(f'(s_l) * g_l) x_{l-1}^T with g_l a noise-correlation estimate of d loss / d x_l, and the readout the
delta rule on its observed error. The manifold the NMNC perturbations live in is re-estimated from a running
covariance of each layer's activity every ``refresh`` updates; both are buffers, so checkpoints carry them.

The update is written as the gradient of a surrogate, sum_l <stop_grad(g_l), f(W_l stop_grad(x_{l-1}))> / B
+ CE(readout(stop_grad(x_L))), so that repro.learning.training.train (seeding, checkpoints, resume) runs it unchanged.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from repro.learning.smallnets import MLP
from repro.papers.nmnc.nc import estimate_activity_gradient, random_basis, top_components

METHODS = ("bp", "vnc", "nmnc", "random", "readout")


class NoiseCorrelationMLP(nn.Module):
    """An MLP plus, per hidden layer, the running activity covariance and the perturbation basis."""

    def __init__(self, net: MLP, k: int, ema: float = 0.9):
        super().__init__()
        self.net, self.k, self.ema = net, int(k), float(ema)
        for li, layer in enumerate(net.hidden_layers):
            n = layer.out_features
            self.register_buffer(f"cov{li}", torch.zeros(n, n))
            self.register_buffer(f"mean{li}", torch.zeros(n))
            self.register_buffer(f"basis{li}", torch.zeros(n, self.k))
        self.register_buffer("updates", torch.zeros((), dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def _loss_above(self, li: int, y: torch.Tensor):
        """Per-sample cross-entropy from layer l's activity upward (labels tiled over perturbation copies)."""
        layers, act = self.net.hidden_layers, self.net.act

        def loss(a: torch.Tensor) -> torch.Tensor:
            h = a
            for layer in layers[li + 1 :]:
                h = act(layer(h))
            return F.cross_entropy(self.net.head(h), y.repeat(len(a) // len(y)), reduction="none")

        return loss

    @torch.no_grad()
    def _track(self, li: int, x: torch.Tensor, method: str, refresh: int) -> None:
        """Update layer l's running mean/covariance; re-estimate its basis at the first and every refresh-th update."""
        mean, cov = getattr(self, f"mean{li}"), getattr(self, f"cov{li}")
        first = int(self.updates) == 0
        batch_mean = x.mean(0)
        centred = x - batch_mean
        batch_cov = centred.T @ centred / max(len(x) - 1, 1)
        rate = 1.0 if first else 1.0 - self.ema
        mean.mul_(1 - rate).add_(rate * batch_mean)
        cov.mul_(1 - rate).add_(rate * batch_cov)
        if first or int(self.updates) % refresh == 0:
            basis = top_components(cov, self.k) if method == "nmnc" else random_basis(cov.shape[0], self.k)
            getattr(self, f"basis{li}").copy_(basis)

    def surrogate(self, x: torch.Tensor, y: torch.Tensor, method: str, n_perturb: int, sigma: float, refresh: int):
        """The loss whose gradient is this method's update (backprop for ``bp``)."""
        if method == "bp":
            return F.cross_entropy(self.net(x), y)
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r}; methods: {METHODS}")
        with torch.no_grad():
            acts = self.net.activations(x)
        total = F.cross_entropy(self.net.head(acts[-1]), y)
        if method == "readout":  # the baseline: hidden layers stay at their initialisation, only the readout learns
            self.updates += 1
            return total
        inputs = [x.flatten(1), *acts[:-1]]
        for li, layer in enumerate(self.net.hidden_layers):
            basis = None
            if method != "vnc":
                self._track(li, acts[li], method, refresh)
                basis = getattr(self, f"basis{li}")
            g = estimate_activity_gradient(self._loss_above(li, y), acts[li], n_perturb, sigma, basis)
            local = self.net.act(layer(inputs[li].detach()))
            total = total + (g.detach() * local).sum() / len(x)
        self.updates += 1
        return total


def forward_passes(method: str, n_hidden: int, n_perturb: int) -> int:
    """Forward passes per sample and update: one clean pass plus n_perturb per hidden layer (partial passes
    from the layer upward counted as whole ones); backprop counts its forward and backward pass as two."""
    if method == "readout":
        return 1
    return 2 if method == "bp" else 1 + n_hidden * n_perturb
