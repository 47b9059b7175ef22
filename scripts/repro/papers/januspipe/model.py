"""A small conservative MLIP, split into pipeline stages, and its four-phase stage-decomposed execution.

Energy model: per-atom radial descriptors (Gaussian basis of neighbour distances per neighbour species,
cosine cutoff, minimum image) and a SiLU MLP; E = sum of atomic outputs + per-species reference energies;
forces F = -dE/dr. Training on (E, F) therefore needs a double backward.

Stage decomposition (SymFold's four phases; ``Stage`` k maps h_{k-1} -> h_k, stage 0 takes positions):
1. F   (stages 0 -> S-1): h_k = f_k(h_{k-1}); the last stage emits atomic energies.
2. B1  (S-1 -> 0): g_{k-1} = J_k^T g_k (vector-Jacobian product with create_graph), g_{S-1} = 1; stage 0
   returns g_r = dE/dr, so F = -g_r.
3. B2a (0 -> S-1): adjoints of the force graph's boundary vectors: gbar_k = (d g_{k-1} / d g_k)^T gbar_{k-1},
   starting from gbar_r = dL/d(g_r) = -dL/dF at stage 0.
4. B2b (S-1 -> 0): hbar_{k-1}, dL/dθ_k = (d[h_k, g_{k-1}] / d[h_{k-1}, θ_k])^T [hbar_k, gbar_{k-1}], starting
   from hbar_{S-1} = dL/dE at the last stage.
Every boundary carries only h, g, gbar or hbar (one (atoms, width) tensor), so stages on different processes
exchange exactly one tensor per phase; the result equals monolithic autograd (tests and the pipeline check).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import torch
from torch import nn

SPECIES = (13, 28, 29)
"""Atomic numbers the model knows (Al, Ni, Cu)."""
SILU_GAIN = 1.7


class Descriptor(nn.Module):
    """Radial symmetry functions per neighbour species, minimum-image convention (cutoff < half the cell)."""

    def __init__(self, n_radial: int, cutoff: float):
        super().__init__()
        self.cutoff = cutoff
        self.register_buffer("centres", torch.linspace(1.8, cutoff, n_radial, dtype=torch.float64))
        self.width = (cutoff - 1.8) / max(n_radial - 1, 1)
        self.n_out = n_radial * len(SPECIES) + len(SPECIES)

    def forward(self, positions: torch.Tensor, cells: torch.Tensor, onehot: torch.Tensor) -> torch.Tensor:
        """(B, N, 3) positions -> (B * N, n_out) atomic descriptors."""
        diff = positions[:, None, :, :] - positions[:, :, None, :]
        frac = diff @ torch.linalg.inv(cells)[:, None]
        frac = frac - torch.round(frac.detach())
        diff = frac @ cells[:, None]
        n = positions.shape[1]
        eye = torch.eye(n, dtype=torch.bool, device=positions.device)
        dist2 = (diff**2).sum(-1).masked_fill(eye, 1.0)
        dist = torch.sqrt(dist2)
        cut = torch.where(
            (dist < self.cutoff) & ~eye, 0.5 * (torch.cos(torch.pi * dist / self.cutoff) + 1.0), torch.zeros_like(dist)
        )
        basis = torch.exp(-(((dist[..., None] - self.centres) / self.width) ** 2)) * cut[..., None]
        per_species = torch.einsum("bijk,bjs->bisk", basis, onehot).flatten(2)
        return torch.cat([per_species, onehot], dim=-1).flatten(0, 1)


class Stage(nn.Module):
    """One pipeline stage: (the descriptor, for stage 0, and) a run of Linear + SiLU layers (no SiLU after the
    model's output layer)."""

    def __init__(self, widths: list[tuple[int, int]], descriptor: Descriptor | None, last: bool):
        super().__init__()
        self.descriptor = descriptor
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(widths):
            layers.append(nn.Linear(a, b, dtype=torch.float64))
            if not (last and i == len(widths) - 1):
                layers.append(nn.SiLU())
        self.layers = nn.Sequential(*layers)

    def forward(self, h: torch.Tensor, batch: Batch) -> torch.Tensor:
        if self.descriptor is not None:
            h = self.descriptor(h, batch.cells, batch.onehot)
        return self.layers(h)


@dataclass
class Batch:
    positions: torch.Tensor
    cells: torch.Tensor
    onehot: torch.Tensor
    energy: torch.Tensor
    forces: torch.Tensor
    reference: torch.Tensor = field(default_factory=lambda: torch.zeros(0))


class MLIP(nn.Module):
    """The whole potential as a list of stages over units: unit 0 is the descriptor, units 1..layers the
    Linear layers; ``split`` gives the units per stage (it sums to layers + 1, its first entry >= 1)."""

    def __init__(self, n_radial: int, cutoff: float, width: int, layers: int, split: list[int]):
        super().__init__()
        if sum(split) != layers + 1 or min(split) < 1:
            raise ValueError(f"split {split} must cover {layers + 1} units with at least one per stage")
        descriptor = Descriptor(n_radial, cutoff)
        dims = [descriptor.n_out] + [width] * (layers - 1) + [1]
        widths = list(zip(dims[:-1], dims[1:]))
        bounds = [0, *itertools.accumulate(split)]
        stages = []
        for k in range(len(split)):
            first, stop = max(bounds[k] - 1, 0), bounds[k + 1] - 1
            stages.append(Stage(widths[first:stop], descriptor if k == 0 else None, k == len(split) - 1))
        self.stages = nn.ModuleList(stages)
        self.register_buffer("species_energy", torch.zeros(len(SPECIES), dtype=torch.float64))
        for layer in self.modules():
            if isinstance(layer, nn.Linear):
                # variance-preserving for SiLU, so a deep stack neither vanishes nor explodes at init
                nn.init.normal_(layer.weight, std=SILU_GAIN / layer.in_features**0.5)
                nn.init.zeros_(layer.bias)

    def energy(self, batch: Batch, positions: torch.Tensor) -> torch.Tensor:
        h = positions
        for stage in self.stages:
            h = stage(h, batch)
        return self.total(h, batch)

    def total(self, atomic: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Structure energies from the last stage's atomic outputs plus the species reference energies."""
        b, n = batch.positions.shape[:2]
        return atomic.view(b, n).sum(1) + batch.onehot.sum(1) @ self.species_energy


def onehot(numbers) -> torch.Tensor:
    table = torch.tensor(SPECIES)
    numbers = torch.as_tensor(numbers)
    return (numbers[..., None] == table).to(torch.float64)


def loss_terms(energy, forces, batch: Batch, weights: dict) -> torch.Tensor:
    """Per-atom energy MSE + force-component MSE, weighted."""
    n = batch.positions.shape[1]
    e = torch.mean(((energy - batch.energy) / n) ** 2)
    f = torch.mean((forces - batch.forces) ** 2)
    return weights["energy"] * e + weights["forces"] * f


def monolithic(model: MLIP, batch: Batch, weights: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(loss, energy, forces) with plain autograd: forces by autograd.grad(create_graph=True)."""
    positions = batch.positions.clone().requires_grad_(True)
    energy = model.energy(batch, positions)
    (grad,) = torch.autograd.grad(energy.sum(), positions, create_graph=True)
    forces = -grad
    return loss_terms(energy, forces, batch, weights), energy, forces


class StageRunner:
    """Runs one stage's four phases for one micro-batch with explicit boundary tensors.

    Each phase consumes the boundary tensor the neighbouring stage produced and returns the one it sends
    on; nothing else crosses a stage boundary. Graphs are kept between phases on the stage that built them.
    """

    def __init__(self, stage: Stage, index: int, n_stages: int):
        self.stage, self.index, self.last = stage, index, index == n_stages - 1
        self.params = [p for p in stage.parameters() if p.requires_grad]

    def forward(self, h_in: torch.Tensor, batch: Batch) -> torch.Tensor:
        self.h_in = h_in.detach().requires_grad_(True)
        self.h_out = self.stage(self.h_in, batch)
        return self.h_out.detach()

    def force_backward(self, g_out: torch.Tensor | None) -> torch.Tensor:
        """B1: g_in = J^T g_out (with create_graph so B2 can differentiate it); last stage: g_out = 1."""
        self.g_out = (torch.ones_like(self.h_out) if self.last else g_out.detach()).requires_grad_(True)
        (self.g_in,) = torch.autograd.grad(self.h_out, self.h_in, self.g_out, create_graph=True)
        return self.g_in.detach()

    def double_backward_a(self, gbar_in: torch.Tensor) -> torch.Tensor | None:
        """B2a: the adjoint of g_out from that of g_in (linear in g_out); the last stage sends nothing."""
        self.gbar_in = gbar_in.detach()
        if self.last:
            return None
        (gbar_out,) = torch.autograd.grad(self.g_in, self.g_out, self.gbar_in, retain_graph=True)
        return gbar_out.detach()

    def double_backward_b(self, hbar_out: torch.Tensor) -> tuple[torch.Tensor | None, list[torch.Tensor]]:
        """B2b: adjoint of h_in and parameter gradients from the adjoints of [h_out, g_in]."""
        inputs = ([] if self.index == 0 else [self.h_in]) + self.params
        grads = (
            torch.autograd.grad([self.h_out, self.g_in], inputs, [hbar_out.detach(), self.gbar_in]) if inputs else ()
        )
        for attr in ("h_in", "h_out", "g_out", "g_in", "gbar_in"):
            delattr(self, attr)
        if self.index == 0:
            return None, list(grads)
        return grads[0].detach(), list(grads[1:])


def energy_adjoint(model: MLIP, atomic: torch.Tensor, batch: Batch, weights: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """At the last stage: structure energies and dL/d(atomic outputs) of the energy term of the loss."""
    atomic = atomic.detach().requires_grad_(True)
    energy = model.total(atomic, batch)
    n = batch.positions.shape[1]
    loss = weights["energy"] * torch.mean(((energy - batch.energy) / n) ** 2)
    (hbar,) = torch.autograd.grad(loss, atomic)
    return energy.detach(), hbar


def force_adjoint(g_r: torch.Tensor, batch: Batch, weights: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """At stage 0: forces -g_r and dL/d(g_r) of the force term of the loss."""
    g_r = g_r.detach().requires_grad_(True)
    forces = -g_r
    loss = weights["forces"] * torch.mean((forces - batch.forces) ** 2)
    (gbar,) = torch.autograd.grad(loss, g_r)
    return forces.detach(), gbar


def decomposed(model: MLIP, batch: Batch, weights: dict) -> tuple[torch.Tensor, torch.Tensor, list[list[torch.Tensor]]]:
    """One micro-batch through the four phases stage by stage: (energy, forces, parameter gradients per stage)."""
    runners = [StageRunner(s, k, len(model.stages)) for k, s in enumerate(model.stages)]
    h = batch.positions
    for r in runners:
        h = r.forward(h, batch)
    g = None
    for r in reversed(runners):
        g = r.force_backward(g)
    forces, gbar = force_adjoint(g, batch, weights)
    for r in runners:
        gbar = r.double_backward_a(gbar)
    energy, hbar = energy_adjoint(model, h, batch, weights)
    grads: list[list[torch.Tensor]] = [[] for _ in runners]
    for r in reversed(runners):
        hbar, grads[r.index] = r.double_backward_b(hbar)
    return energy, forces, grads


def linears(model: MLIP) -> list[nn.Linear]:
    """The model's Linear layers in order, whatever its split into stages."""
    return [m for stage in model.stages for m in stage.layers if isinstance(m, nn.Linear)]


def transfer(source: MLIP, target: MLIP) -> MLIP:
    """Copy weights between two splits of the same architecture (layer by layer)."""
    for a, b in zip(linears(source), linears(target), strict=True):
        b.load_state_dict(a.state_dict())
    target.species_energy.copy_(source.species_energy)
    return target
