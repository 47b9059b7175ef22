"""The rod energy in torch, for the memory comparison: gradients by unrolling Newton versus the adjoint.

Unrolled autograd differentiates every Newton iteration x_{k+1} = x_k - H(x_k)^{-1} G(x_k, z), so the graph
keeps each iteration's Hessian and factorisation; the adjoint differentiates only the equilibrium condition
G(x*, z) = 0 at the converged point: d(v . x*)/dz = -G_z^T p with H p = v. Memory is measured as the bytes
of the tensors autograd saves for the backward pass (``saved_tensors_hooks``), which is what grows with
the number of unrolled iterations.
"""

from __future__ import annotations

import torch

from repro.papers.neural_control.rod import Rod


def energy(rod: Rod, x: torch.Tensor) -> torch.Tensor:
    """The energy of repro.papers.neural_control.rod.Rod, in torch (same stretching and bending terms)."""
    p = x.reshape(-1, 2)
    e = p[1:] - p[:-1]
    s = torch.linalg.norm(e, dim=1)
    stretch = 0.5 * rod.ea * rod.l0 * torch.sum((s / rod.l0 - 1.0) ** 2)
    e1, e2 = e[:-1], e[1:]
    phi = torch.atan2(e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0], torch.sum(e1 * e2, dim=1))
    bend = 0.5 * rod.ei / rod.l0 * torch.sum((2.0 * torch.tan(phi / 2)) ** 2)
    return stretch + bend


def assemble(rod: Rod, free: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    xl, yl, tl, xr, yr, tr = z
    l0 = rod.l0
    left = torch.stack([xl, yl, xl + l0 * torch.cos(tl), yl + l0 * torch.sin(tl)])
    right = torch.stack([xr - l0 * torch.cos(tr), yr - l0 * torch.sin(tr), xr, yr])
    return torch.cat([left, free, right])


def residual(rod: Rod, free: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """G(x_free, z) = dE/dx_free, kept differentiable (plain autograd: torch.func refuses saved-tensor hooks)."""
    (g,) = torch.autograd.grad(energy(rod, assemble(rod, free, z)), free, create_graph=True)
    return g


def hessian(g: torch.Tensor, free: torch.Tensor, create_graph: bool) -> torch.Tensor:
    rows = [torch.autograd.grad(g[i], free, retain_graph=True, create_graph=create_graph)[0] for i in range(len(g))]
    return torch.stack(rows)


def unrolled_gradient(rod: Rod, start: torch.Tensor, z: torch.Tensor, v: torch.Tensor, iterations: int):
    """d(v . x_n)/dz by backpropagating through ``iterations`` plain Newton steps, and the bytes saved."""
    z = z.clone().requires_grad_(True)
    saved = SavedBytes()
    with torch.autograd.graph.saved_tensors_hooks(saved.pack, saved.unpack):
        x = start.clone().requires_grad_(True)
        for _ in range(iterations):
            g = residual(rod, x, z)
            x = x - torch.linalg.solve(hessian(g, x, create_graph=True), g)
        (dz,) = torch.autograd.grad(v @ x, z)
    return dz, saved.total


def adjoint_gradient(rod: Rod, equilibrium: torch.Tensor, z: torch.Tensor, v: torch.Tensor):
    """d(v . x*)/dz at a converged equilibrium by one adjoint solve, and the bytes autograd saved."""
    z = z.clone().requires_grad_(True)
    saved = SavedBytes()
    with torch.autograd.graph.saved_tensors_hooks(saved.pack, saved.unpack):
        x = equilibrium.clone().requires_grad_(True)
        g = residual(rod, x, z)
        p = torch.linalg.solve(hessian(g, x, create_graph=False), v)
        (dz,) = torch.autograd.grad(g, z, grad_outputs=p)
    return -dz, saved.total


class SavedBytes:
    """Counts the bytes of every tensor autograd saves for backward while the hooks are active."""

    def __init__(self) -> None:
        self.total = 0

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        self.total += tensor.numel() * tensor.element_size()
        return tensor

    @staticmethod
    def unpack(tensor: torch.Tensor) -> torch.Tensor:
        return tensor
