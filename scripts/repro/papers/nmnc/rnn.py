"""NMNC's recurrent variant: a vanilla RNN reading each image row by row; the manifold is the principal
subspace of its hidden states, the Jacobian that of the logits with respect to a hidden state, and noise
correlation perturbs the state at one time step and reads the loss at the end of the sequence."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from repro.papers.nmnc import nc


class RowRNN(nn.Module):
    """h_t = tanh(W x_t + U h_{t-1} + b) over the image rows; logits from the last state."""

    def __init__(self, n_in: int, hidden: int, n_out: int = 10):
        super().__init__()
        self.cell = nn.RNNCell(n_in, hidden, nonlinearity="tanh")
        self.head = nn.Linear(hidden, n_out)

    def run_from(self, h: torch.Tensor | None, x: torch.Tensor, start: int) -> list[torch.Tensor]:
        """States after steps start..T-1 (x: (B, T, n_in)), from state ``h`` (None: zeros before step 0)."""
        states = []
        for t in range(start, x.shape[1]):
            h = self.cell(x[:, t], h)
            states.append(h)
        return states

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.run_from(None, x, 0)[-1])

    def loss_after(self, t: int, x: torch.Tensor, y: torch.Tensor):
        """Per-sample loss as a function of the state after step t (rows tiled over perturbation copies)."""

        def loss(h: torch.Tensor) -> torch.Tensor:
            reps = len(h) // len(x)
            rest = self.run_from(h, x.repeat(reps, 1, 1), t + 1)
            out = self.head(rest[-1] if rest else h)
            return F.cross_entropy(out, y.repeat(reps), reduction="none")

        return loss


def as_rows(x: np.ndarray, source: dict) -> np.ndarray:
    """Flattened (C, H, W) images as sequences of H rows of C * W features."""
    h, w = source["size"]
    c = source["channels"]
    return x.reshape(len(x), c, h, w).transpose(0, 2, 1, 3).reshape(len(x), h, c * w)


def measure(model: RowRNN, x: np.ndarray, y: np.ndarray, s: dict) -> dict:
    """rho_k of the hidden-state PCs (Jacobians at every step) against a random subspace, and median gradient
    cosines of VNC / NMNC / random estimates at the middle step with ``n_perturb`` forward passes."""
    r = s["rnn"]
    xt, yt = torch.as_tensor(x), torch.as_tensor(y)
    with torch.no_grad():
        states = model.run_from(None, xt, 0)
    activity = torch.cat(states).numpy()
    basis = nc.pca_basis(activity, r["k"])
    sub = xt[: s["manifold"]["jacobian_samples"]]
    jac = []
    for t, h in enumerate(states):
        h = h[: len(sub)].clone().requires_grad_(True)
        rest = model.run_from(h, sub, t + 1)
        logits = model.head(rest[-1] if rest else h)
        jac.append(
            torch.stack([torch.autograd.grad(logits[:, c].sum(), h, retain_graph=True)[0] for c in range(10)], 1)
        )
    jac = torch.cat(jac).numpy()
    random = nc.random_basis(activity.shape[1], r["k"]).double().numpy()
    t_mid = x.shape[1] // 2
    xb, yb = xt[: r["cosine_samples"]], yt[: r["cosine_samples"]]
    h = states[t_mid][: len(xb)].detach()
    loss = model.loss_after(t_mid, xb, yb)
    hg = h.clone().requires_grad_(True)
    true = torch.autograd.grad(loss(hg).sum(), hg)[0]
    bases = {
        "vnc": None,
        "nmnc": torch.as_tensor(basis, dtype=torch.float32),
        "random": torch.as_tensor(random, dtype=torch.float32),
    }
    cosines = {
        m: float(
            torch.median(
                nc.cosine(nc.estimate_activity_gradient(loss, h, r["n_perturb"], s["perturb"]["sigma"], b), true)
            )
        )
        for m, b in bases.items()
    }
    return {
        "n": activity.shape[1],
        "rho_k": nc.captured_energy(jac, basis),
        "rho_k_random": nc.captured_energy(jac, random),
        "participation_ratio": nc.participation_ratio(activity),
        "cosine": cosines,
    }
