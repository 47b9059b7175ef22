"""Empirical neural tangent kernel of the masked network and its alignment with the target.

Per-example gradients of a bias-free MLP are outer products: d f(x) / d W_l = M_l * (delta_l h_{l-1}^T),
with h_{l-1} the layer's input and delta_l = d f / d z_l the gradient at its pre-activation. One backward
pass of sum_i f(x_i) gives every delta_l (examples do not interact), so the Jacobian costs one pass
instead of one per example.
"""

from __future__ import annotations

import torch


def jacobian(weights: list[torch.Tensor], masks: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """Per-example gradient of the first logit w.r.t. all weights, (n, n_params); pruned weights get 0."""
    inputs, pre = [], []
    h = x
    for layer, (w, m) in enumerate(zip(weights, masks)):
        inputs.append(h.detach())
        z = (h.detach() @ (w * m).T).requires_grad_(True) if layer == 0 else h @ (w * m).T
        pre.append(z)
        h = torch.relu(z) if layer < len(weights) - 1 else z
    deltas = torch.autograd.grad(h[:, 0].sum(), pre)
    blocks = [(d[:, :, None] * a[:, None, :]) * m for d, a, m in zip(deltas, inputs, masks)]
    return torch.cat([b.reshape(len(x), -1) for b in blocks], dim=1)


def ntk(weights, masks, x: torch.Tensor) -> torch.Tensor:
    """K = J J^T."""
    J = jacobian(weights, masks, x)
    return J @ J.T


def alignment(K: torch.Tensor, y: torch.Tensor) -> float:
    """Kernel-target alignment <K, y y^T>_F / (|K|_F |y y^T|_F), y in {-1, +1}."""
    y = y.to(K.dtype)
    return float((y @ K @ y) / (torch.linalg.norm(K) * (y @ y)))


def center(K: torch.Tensor) -> torch.Tensor:
    """H K H with H = I - 11^T/n: removes the constant component that dominates |K|_F for ReLU networks."""
    n = K.shape[0]
    H = torch.eye(n, dtype=K.dtype, device=K.device) - 1.0 / n
    return H @ K @ H
